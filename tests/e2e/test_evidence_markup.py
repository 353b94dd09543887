"""Markup in quotes, reasons and documents is shown literally and never runs, on every page that shows them: the
judge's run page and its quotes in the document, the rater's run page and its quotes in the document.

An evidence judge run (from the command line) and an evidence rater run (launched from its page, done by the
server's worker) read a document whose first line is markup; the stub LLM answers with a verbatim quote of that
markup (exact: highlighted in the document pane), a quote that changes it (unsupported: its reason shows markup
of both sides) and `<b>` (too short). As in test_xss.py, the browser context bypasses the Content-Security-Policy,
so escaping alone must hold.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, sign_in, start_server, stop_server, wait_until_true
from tests.e2e.test_xss import QUESTION, REFERENCE, SCRIPT, SYSTEM, hostile_files, one_study
from tests.support.evidence_replies import _DOCUMENT, genuine, user_text
from tests.support.live import ADMIN, SHARED_PASSWORD, instance_database, prepare_instance
from tests.support.openai_stub import StubOpenAIServer

pytestmark = pytest.mark.e2e

BASELINE = "markup-baseline"
MODEL = "evidence-test"
EXACT_QUOTE = f"Minutes of the meeting {SCRIPT}"  # the document's own markup, verbatim
CHANGED_QUOTE = "Minutes of the meeting x<svg onload=window.__pwned=2>y held"  # its reason shows both sides' markup
SHORT_QUOTE = "<b>"
REASONING = f"Checked against the minutes {SCRIPT}"


def markup_reply(body) -> str:
    """The rater's or the judge's JSON reply: the three markup quotes about the hostile minutes, else a genuine one."""
    text = user_text(body)
    document = _DOCUMENT.search(text).group(1)
    judge = "## Assistant A's answer" in text
    bodies = [EXACT_QUOTE, CHANGED_QUOTE, SHORT_QUOTE] if EXACT_QUOTE in document else [genuine(document, text)]
    quotes = [{"quote": quote, "stance": "supports", **({"answer": "A"} if judge else {})} for quote in bodies]
    return json.dumps({"reasoning": REASONING, "quotes": quotes, **({"verdict": "A"} if judge else {"score": 3})})


def judge_from_the_command_line(instance: Path, stub_url: str, monkeypatch) -> None:
    from app import create_app
    from app.extensions import db

    monkeypatch.setenv("OPENAI_BASE_URL", stub_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-markup-test-0123456789")
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    app = create_app({"INSTANCE_PATH": instance})
    result = app.test_cli_runner().invoke(args=["judge", SYSTEM, "--battle-with", BASELINE, "--profile", "evidence",
                                                "--judge-model", MODEL, "--concurrency", "2"])
    assert result.exit_code == 0, result.output
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def markup_server(tmp_path, monkeypatch):
    folder = tmp_path / "hostile"
    hostile_files(folder)
    # A second system answers the hostile question too, so the judge has a pair on the markup document.
    (folder / f"{BASELINE}.pred.jsonl").write_text(json.dumps(
        {"query": QUESTION, "gt": REFERENCE, "markup-baseline_pred": "The board raised the rate.",
         "evaluation": "human"}) + "\n", encoding="utf-8")
    instance = tmp_path / "instance"
    prepare_instance(instance, folders=(folder,))
    one_study(instance)
    with StubOpenAIServer(policy=markup_reply) as stub:
        judge_from_the_command_line(instance, stub.base_url, monkeypatch)
        server = start_server(instance, {"OPENAI_BASE_URL": stub.base_url, "LEVAL_TOKENIZER": "estimate",
                                         "OPENAI_API_KEY": "sk-markup-test-0123456789"})
        try:
            yield server
        finally:
            stop_server(server)


def assert_shown_literally(page, *texts: str) -> None:
    """Nothing ran or became an element, the quote spans' JSON holds no markup, and every text is on the page."""
    assert page.evaluate("typeof window.__pwned") == "undefined", page.url
    injected = page.evaluate("""() => ({
        handlers: document.querySelectorAll('[onerror],[onload]').length,
        images: document.querySelectorAll('img[src="x"]').length,
        svgs: document.querySelectorAll('svg[onload], main svg').length,
        scripts: [...document.scripts].filter(s => s.type !== 'application/json'
                                              && s.textContent.includes('__pwned')).length,
        json: [...document.querySelectorAll('script[type="application/json"]')]
            .filter(s => s.textContent.includes('<')).length,
    })""")
    assert injected == {"handlers": 0, "images": 0, "svgs": 0, "scripts": 0, "json": 0}, (page.url, injected)
    shown = page.evaluate("document.title + ' ' + document.body.textContent")
    for text in texts:
        assert text in shown, (page.url, text)


def stored_evidence(server, table: str, where: str) -> list[dict]:
    with instance_database(server.instance) as con:
        return [json.loads(evidence)["quotes"] for (evidence,) in con.execute(
            f"SELECT evidence FROM {table} WHERE evidence IS NOT NULL AND {where}")]


def hostile_question(server) -> int:
    with instance_database(server.instance) as con:
        (question_id,) = con.execute("SELECT id FROM questions WHERE instruction = ?", (QUESTION,)).fetchone()
    return question_id


def check_the_quotes_in_the_document(page, quotes: list[dict]) -> None:
    """The drill-down: the document's markup as text, each quote with its status, the exact one highlighted."""
    expect(page.locator("#doc-body")).to_have_attribute("aria-busy", "false")
    expect(page.locator("#quote-list li[data-status]")).to_have_count(3)
    assert page.locator("#quote-list li [data-field='status']").all_inner_texts() == ["exact", "unsupported",
                                                                                       "unsupported"]
    expect(page.locator("#quote-list li").nth(2).locator("[data-field='too-short']")).to_have_text("too short")
    wait_until_true(page, "CSS.highlights.get('evidence') && CSS.highlights.get('evidence').size >= 1")
    painted = page.evaluate("[...CSS.highlights.get('evidence')].map(r => r.toString()).join('')")
    assert painted == EXACT_QUOTE
    assert SCRIPT in page.locator("#doc-body").inner_text()
    assert_shown_literally(page, *(q["quote"] for q in quotes), *(q["reason"] for q in quotes))


def test_markup_in_quotes_reasons_and_documents_is_shown_literally_on_every_evidence_page(markup_server, browser):
    server = markup_server
    question_id = hostile_question(server)
    with instance_database(server.instance) as con:
        (judge_job,) = con.execute("SELECT id FROM jobs WHERE kind = 'judge'").fetchone()
    judged = stored_evidence(server, "llm_judgments", f"question_id = {question_id}")
    assert len(judged) == 2 and all(len(quotes) == 3 for quotes in judged)  # both orders
    quotes = judged[0]
    assert [q["status"] for q in quotes] == ["exact", "unsupported", "unsupported"] and quotes[2]["too_short"]
    assert "2>y held vs 1</script> <img" in quotes[1]["reason"]  # the reason shows markup of both sides
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
    dialogs: list[str] = []
    try:
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        sign_in(page, server.url, ADMIN, SHARED_PASSWORD)

        # The judge's run page: each pair's quotes, their reasons and the raw reply, inline.
        page.goto(f"{server.url}/judge/runs/{judge_job}")
        page.locator(f'tr[data-question-id="{question_id}"] summary').click()
        expect(page.locator(f'tr[data-question-id="{question_id}"] .quote-checks li')).to_have_count(6)
        assert_shown_literally(page, SYSTEM, QUESTION, REASONING, *(q["quote"] for q in quotes),
                               *(q["reason"] for q in quotes))
        screenshot(page, "markup-judge-run")
        page.locator(f'tr[data-question-id="{question_id}"] [data-link="quotes"]').first.click()
        page.wait_for_url(re.compile(r"/judge/runs/\d+/quotes"))
        check_the_quotes_in_the_document(page, quotes)
        assert "flagged: a quote under the minimum" in page.locator("main").inner_text()
        screenshot(page, "markup-judge-quotes")

        # The rater: launched from its page, done by the server's worker, against the same stub.
        page.goto(server.url + "/judge/rater")
        page.get_by_label("Profile", exact=True).select_option("evidence")
        page.get_by_label("Prompt version").select_option(label="studio-rater-evidence v1")
        page.get_by_label("Rater model").fill(MODEL)
        page.get_by_label("Rater context, tokens (evidence)").fill("4000")
        page.get_by_role("button", name="Rate every answer").click()
        rater_job = int(re.search(r"/judge/rater/runs/(\d+)", page.url).group(1))
        for _ in range(600):
            status = page.request.get(f"{server.url}/jobs/api/{rater_job}").json()["status"]
            if status in ("done", "failed"):
                break
            page.wait_for_timeout(100)
        assert status == "done"
        page.goto(f"{server.url}/judge/rater/runs/{rater_job}")
        row = page.locator("#evidence-ratings tbody tr", has_text="What did the board decide?").first
        expect(row.locator("[data-flag='too-short']")).to_have_text("flagged: a quote under the minimum")
        assert_shown_literally(page, SYSTEM, QUESTION[:40])
        screenshot(page, "markup-rater-run")
        row.get_by_role("link", name="Quotes in the document").click()
        page.wait_for_url(re.compile(r"/judge/rater/runs/\d+/quotes"))
        rated = stored_evidence(server, "llm_ratings", f"job_id = {rater_job} AND evidence LIKE '%<svg%'")
        assert rated and [q["status"] for q in rated[0]] == ["exact", "unsupported", "unsupported"]
        check_the_quotes_in_the_document(page, rated[0])
        screenshot(page, "markup-rater-quotes")
    finally:
        context.close()
    assert not dialogs, dialogs
