"""Authoring in a browser: two pairs with evidence selected in the longest document, reload, export, re-import."""
from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import painted, screenshot, sign_in, start_server, stop_server, wait_until, wait_until_true
from tests.support.shared import HUMAN_EVAL, shared_available

pytestmark = pytest.mark.e2e


@pytest.fixture
def server(tmp_path):
    server = start_server(tmp_path / "instance")
    try:
        if shared_available():  # L-Eval's longest human-eval document (42,824 words) beside the demo's
            result = server.cli("import-leval", str(HUMAN_EVAL / "claude.gpt4.ref.jsonl"))
            assert result.returncode == 0, result.stderr
        yield server
    finally:
        stop_server(server)


def shown_part(page, paragraph) -> tuple[dict, float, float] | None:
    """Scroll the document pane to a paragraph; its box and the top and bottom of the part of it the pane
    shows, once that part holds a line or more and stays put from one frame to the next. Paragraphs are
    content-visibility: auto: one coming into view is laid out at its real size a frame later (399 px
    measured, 620 px drawn), and those laid out on the way push it along."""
    paragraph.scroll_into_view_if_needed()
    painted(page)
    box = paragraph.bounding_box()
    painted(page)
    if box != paragraph.bounding_box():
        return None
    pane = page.locator("#doc-body").bounding_box()
    top, bottom = max(box["y"], pane["y"]), min(box["y"] + box["height"], pane["y"] + pane["height"])
    return (box, top, bottom) if bottom - top > 24 else None


def select_text(page, segment: int, start_frac: float, end_frac: float) -> None:
    """Select text the way a person does: click where it starts in a paragraph of the document, where the
    pane shows it, and Shift+click where it ends. (A drag pressed at some heights of a line selects nothing
    in Chromium, so which text a drag got depended on where the pane had scrolled.)"""
    paragraph = page.locator("#doc-body p.doc-seg").nth(segment)
    shown = []
    wait_until(page, lambda: shown.append(shown_part(page, paragraph)) or shown[-1], f"paragraph {segment} in view")
    box, top, bottom = shown[-1]
    y = top + 8
    page.mouse.click(box["x"] + box["width"] * start_frac, y)
    page.keyboard.down("Shift")
    page.mouse.click(box["x"] + box["width"] * end_frac, min(y + box["height"] * 0.5, bottom - 8))
    page.keyboard.up("Shift")


def author(page, instruction: str, answer: str, segment: int) -> None:
    page.get_by_label("Instruction").fill(instruction)
    page.get_by_label("Answer").fill(answer)
    select_text(page, segment, 0.1, 0.6)
    assert page.evaluate("window.getSelection().toString().length") > 5
    page.get_by_role("button", name="Add selected text as evidence").click()
    expect(page.locator("#evidence-list li")).to_have_count(1)
    page.get_by_role("button", name="Save pair").click()
    expect(page.locator("#pair-status")).to_have_text("Saved.")


def evidence_highlights(page) -> int:
    return page.evaluate("CSS.highlights.get('evidence') ? CSS.highlights.get('evidence').size : 0")


def test_author_two_pairs_reload_export_and_reimport(server, page, tmp_path):
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text)
            if message.type == "error" and not message.text.startswith("Failed to load resource") else None)
    # Browsers ask for /favicon.ico on their own; the app has none.
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    page.on("dialog", lambda dialog: dialog.accept())
    sign_in(page, server.url, server.admin_user, server.admin_password)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Generate").click()
    page.get_by_role("link", name="Author pairs").click()
    expect(page.get_by_role("heading", name="Author new question/answer pairs", level=1)).to_be_visible()
    page.wait_for_load_state()  # the whole table, not the rows parsed so far
    words = [int(w.replace(",", "")) for w in page.locator("#author-documents tbody tr td:nth-child(4)").all_inner_texts()]
    assert words == sorted(words, reverse=True) and words[0] == max(words)
    if shared_available():
        assert words[0] == 42824
    page.locator("#author-documents tbody tr").first.get_by_role("link").click()
    expect(page.locator("#doc-body p.doc-seg").nth(6)).to_be_visible()
    document_url = page.url

    author(page, "Who is named in the opening lines?", "The people the opening names.", 1)
    author(page, "What happens a little later?", "Something described in the text.", 5)
    expect(page.locator("#pair-list > li")).to_have_count(2)
    assert evidence_highlights(page) >= 2
    screenshot(page, "authoring-two-pairs")

    page.reload()
    expect(page.locator("#pair-list > li")).to_have_count(2)
    expect(page.locator("#pair-list > li").first).to_contain_text("Who is named in the opening lines?")
    expect(page.locator("#pair-list > li").first).to_contain_text("by " + server.admin_user)
    wait_until_true(page, "CSS.highlights.get('evidence') && CSS.highlights.get('evidence').size >= 2")
    # "Show" brings the evidence into view inside the document pane.
    page.locator("#pair-list > li").nth(1).get_by_role("button", name="Show").click()
    # Polled: under load the scroll (and the click's handler) may land a few frames after the click returns.
    wait_until_true(page, """(() => {
        const h = CSS.highlights.get('evidence-focus'); if (!h || !h.size) return false;
        const r = [...h][0].getBoundingClientRect();
        const b = document.getElementById('doc-body').getBoundingClientRect();
        return r.height > 0 && r.top >= b.top && r.bottom <= b.bottom; })()""")

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Export task file").click()
    exported = tmp_path / "export.jsonl"
    download_info.value.save_as(exported)
    line = json.loads(exported.read_text(encoding="utf-8"))
    new = [a for a in line["authored"] if a is not None]
    assert line["instructions"][-2:] == ["Who is named in the opening lines?", "What happens a little later?"]
    assert len(new) == 2 and all(len(a["evidence"]) == 1 for a in new)
    for entry in new:
        span = entry["evidence"][0]
        assert line["input"][span["start"]:span["end"]] == span["quote"] and len(span["quote"]) > 5
    before = [(a["evidence"], a["author"]) for a in new]

    for left in (1, 0):  # delete both, then bring them back from the export
        page.locator("#pair-list > li").first.get_by_role("button", name="Delete").click()
        expect(page.locator("#pair-list > li")).to_have_count(left)  # gone once the server has deleted it
        expect(page.locator("#pair-status")).to_have_text("Deleted.")
    page.goto(server.url + "/author/")
    page.get_by_label("L-Eval task file or an export (.jsonl)").set_input_files(str(exported))
    page.get_by_role("button", name="Import").click()
    expect(page.locator(".flash, .flashes").first).to_contain_text("2 pairs added")
    page.goto(document_url)
    expect(page.locator("#pair-list > li")).to_have_count(2)
    with page.expect_download() as again_info:
        page.get_by_role("link", name="Export task file").click()
    again = json.loads(open(again_info.value.path(), encoding="utf-8").read())
    assert [(a["evidence"], a["author"]) for a in again["authored"] if a is not None] == before
    assert problems == []


def test_evidence_selected_anywhere_in_the_longest_document_is_the_text_selected(server, page):
    """Paragraphs through the document, including ones where a dragged selection used to catch nothing
    (a press at some heights of a line; which height depended on where the pane had scrolled)."""
    sign_in(page, server.url, server.admin_user, server.admin_password)
    page.goto(server.url + "/author/")
    page.locator("#author-documents tbody tr").first.get_by_role("link").click()
    expect(page.locator("#doc-body")).to_have_attribute("aria-busy", "false")  # every paragraph is there
    paragraphs = page.locator("#doc-body p.doc-seg").count()
    segments = [segment for segment in (3, 14, 20, 29) if segment < paragraphs]
    selected = []
    for segment in segments:
        select_text(page, segment, 0.1, 0.6)
        selected.append(page.evaluate("window.getSelection().toString()"))
        assert len(selected[-1].strip()) > 5, segment
        page.get_by_role("button", name="Add selected text as evidence").click()
        expect(page.locator("#evidence-list li")).to_have_count(len(selected))
    quotes = page.locator("#evidence-list .evidence-quote").all_inner_texts()  # each shown as “…”
    assert [" ".join(q.split()) for q in quotes] == ["“" + " ".join(s.split()) + "”" for s in selected]
