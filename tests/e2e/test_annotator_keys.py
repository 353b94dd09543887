"""The question page under the keyboard: nothing shifts the workspace, next/previous question keys,
and find-in-document's Enter and `/`."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, sign_in
from tests.e2e.test_scoring import QUESTION_URL, make_annotator, score_with_mouse

pytestmark = pytest.mark.e2e

SIZES = ({"width": 1400, "height": 900}, {"width": 1024, "height": 768})


def bar_box(page) -> dict:
    return page.locator("#workbar").bounding_box()


def viewport_scroll(page) -> tuple[float, float]:
    """How far the window itself has scrolled; the workspace's panels scroll, the window never should."""
    return tuple(page.evaluate("[document.scrollingElement.scrollTop, document.body.scrollTop]"))


def test_keys_on_a_scored_question_never_move_the_work_bar(live_server, browser):
    password = make_annotator(live_server, "kim")
    scored_url = None
    for size in SIZES:
        context = browser.new_context(viewport=size)
        page = context.new_page()
        page.set_default_timeout(15_000)
        sign_in(page, live_server.url, "kim", password)
        if scored_url is None:
            score_with_mouse(page, {"A": 3, "B": 4, "C": 2, "D": 5})
            scored_url = page.url
        page.goto(scored_url)  # a fully scored question: the checked radios come from the server
        expect(page.locator(".score-radio:checked")).to_have_count(4)
        expect(page.locator(".doc-seg").first).to_be_visible()
        before = bar_box(page)
        assert before["y"] >= 0
        keys = ["j", "1", "2", "3", "4", "5", "c", "Escape", "j", "5", "c", "Escape", "j", "c", "Escape",
                "j", "4", "c", "Escape", "j", "j", "c", "k", "Escape", "k", "3", "k", "k", "k", "c", "Escape"]
        for index, key in enumerate(keys):
            page.keyboard.press(key)
            page.wait_for_timeout(30)
            box = bar_box(page)
            where = f"after key {index} ({key!r}) at {size['width']}×{size['height']}"
            assert box == before, where
            assert viewport_scroll(page) == (0, 0), where
            # The bar is on screen: the element at its middle is the bar (or something inside it).
            inside = page.evaluate(
                "([x, y]) => document.getElementById('workbar').contains(document.elementFromPoint(x, y))",
                [before["x"] + 10, before["y"] + before["height"] / 2])
            assert inside, where
        # The keys did their work: the last answer was reached and the focused one is in view in its pane.
        current = page.locator(".answer.is-current")
        expect(current).to_have_count(1)
        expect(current).to_be_in_viewport()
        # The wheel over the answers scrolls the pane, not the page.
        page.mouse.move(size["width"] * 0.75, size["height"] * 0.6)
        page.mouse.wheel(0, -5000)
        page.wait_for_timeout(200)
        assert bar_box(page) == before and viewport_scroll(page) == (0, 0)
        screenshot(page, f"annotator-keys-{size['width']}")
        context.close()


def test_n_and_p_move_between_questions_but_not_from_text_boxes_or_with_modifiers(live_server, page):
    sign_in(page, live_server.url, "lena", make_annotator(live_server, "lena"))
    first = page.url
    expect(page.get_by_text("Question 1 of 10")).to_be_visible()
    page.keyboard.press("p")  # nothing before the first question
    page.wait_for_timeout(300)
    assert page.url == first
    page.keyboard.press("n")
    expect(page.get_by_text("Question 2 of 10")).to_be_visible()
    page.wait_for_load_state()  # the text shows before the deferred scripts that take the keys have run
    second = page.url
    assert QUESTION_URL.search(second) and second != first
    # Typing an n in a comment or the find box is text, not navigation.
    page.keyboard.press("j")
    page.keyboard.press("c")
    page.keyboard.type("no thanks")
    expect(page.get_by_label("Comment on Answer A")).to_have_value("no thanks")
    page.get_by_label("Comment on Answer A").fill("")  # a comment without a score would hold the page
    page.get_by_role("searchbox", name="Find in document").fill("")
    page.get_by_role("searchbox", name="Find in document").type("plan n")
    page.wait_for_timeout(300)
    assert page.url == second
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    page.locator("#doc-body").focus()
    # With a modifier the key belongs to the browser (or the screen reader).
    for chord in ("Control+n", "Alt+n", "Shift+N", "Alt+p", "Meta+p"):
        page.keyboard.press(chord)
    page.wait_for_timeout(300)
    assert page.url == second
    page.keyboard.press("p")
    expect(page.get_by_text("Question 1 of 10")).to_be_visible()
    page.wait_for_load_state()
    assert page.url == first
    # The ? panel lists the keys.
    page.keyboard.press("?")
    panel = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(panel).to_be_visible()
    expect(panel.get_by_role("definition").filter(has_text="Next question")).to_be_visible()
    expect(panel.get_by_role("definition").filter(has_text="Previous question")).to_be_visible()
    for key in ("n", "p"):
        expect(panel.locator("kbd").filter(has_text=re.compile(f"^{key}$"))).to_have_count(1)
    screenshot(page, "annotator-shortcuts-panel")


def test_find_enter_moves_on_and_slash_selects_the_last_query(live_server, page):
    sign_in(page, live_server.url, "mo", make_annotator(live_server, "mo"))
    expect(page.locator(".doc-seg").first).to_be_visible()
    box = page.get_by_role("searchbox", name="Find in document")
    count = page.locator("#doc-find-count")
    box.click()
    page.keyboard.type("board")
    expect(count).to_have_text(re.compile(r"^1 of \d+$"))
    total = int(count.inner_text().split(" of ")[1])
    assert total > 2
    page.keyboard.press("Enter")  # the first Enter after typing moves on
    expect(count).to_have_text(f"2 of {total}")
    page.keyboard.press("Enter")
    expect(count).to_have_text(f"3 of {total}")
    page.keyboard.press("Shift+Enter")
    expect(count).to_have_text(f"2 of {total}")
    # Enter pressed before the search has run shows the first match, then moves on.
    box.fill("")
    page.keyboard.type("the")
    page.keyboard.press("Enter")
    expect(count).to_have_text(re.compile(r"^\d+ of \d+$"))
    shown = int(count.inner_text().split(" of ")[0])
    page.keyboard.press("Enter")
    expect(count).to_have_text(re.compile(rf"^{shown + 1} of \d+$"))
    # `/` from elsewhere focuses the box with the last query selected: typing replaces it.
    page.locator("#doc-body").focus()
    page.keyboard.press("/")
    expect(box).to_be_focused()
    assert page.evaluate("[document.activeElement.selectionStart, document.activeElement.selectionEnd]") == [0, 3]
    page.keyboard.type("board")
    expect(box).to_have_value("board")
    expect(count).to_have_text(re.compile(rf"^\d+ of {total}$"))
