"""An evidence rater run launched from the rater page against the stub LLM, then its drill-down in a browser:
each located quote is highlighted in the document pane over exactly the passage it quotes, with its status
beside it, and "Show" brings a quote into view inside the pane."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    JOB_PATIENCE_MS,
    screenshot,
    sign_in,
    start_server,
    stop_server,
    wait_until_true,
)
from tests.support.evidence_replies import rater_reply
from tests.support.openai_stub import StubOpenAIServer

pytestmark = pytest.mark.e2e


@pytest.fixture
def stub_and_server(tmp_path):
    with StubOpenAIServer(policy=rater_reply) as stub:
        server = start_server(tmp_path / "instance", {"OPENAI_BASE_URL": stub.base_url, "LEVAL_TOKENIZER": "estimate",
                                                      "OPENAI_API_KEY": "sk-e2e-evidence-0123456789"})
        try:
            yield stub, server
        finally:
            stop_server(server)


def letters(text: str) -> str:
    return re.sub(r"\W", "", text.lower())


def test_the_drill_down_highlights_each_located_quote_with_its_status(stub_and_server, page):
    stub, server = stub_and_server
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text)
            if message.type == "error" and not message.text.startswith("Failed to load resource") else None)
    # Browsers ask for /favicon.ico on their own; the app has none.
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    sign_in(page, server.url, server.admin_user, server.admin_password)
    page.goto(server.url + "/judge/rater")
    page.get_by_label("Profile", exact=True).select_option("evidence")
    page.get_by_label("Prompt version").select_option(label="studio-rater-evidence v1")
    page.get_by_label("Rater model").fill("evidence-test")
    page.get_by_label("Rater context, tokens (evidence)").fill("4000")
    page.get_by_role("button", name="Rate every answer").click()
    expect(page).to_have_url(re.compile(r"/judge/rater/runs/\d+$"))  # the launch lands on the run page
    job_status = page.locator(".job-status").first  # the page follows the job
    expect(job_status).to_have_text(re.compile("done|failed"), timeout=JOB_PATIENCE_MS)
    expect(job_status).to_have_text("done")
    assert stub.calls > 0

    page.reload()
    expect(page.locator('[data-field="scope"]')).to_have_text("Every number below: flagged ratings included")
    screenshot(page, "evidence-rater-run")
    row = page.locator("#evidence-ratings tbody tr:not(.flagged)").first
    row.get_by_role("link", name="Quotes in the document").click()
    expect(page.locator("#quote-list li[data-status]")).to_have_count(2)
    statuses = page.locator("#quote-list li [data-field='status']").all_inner_texts()
    assert statuses[0] == "exact" and statuses[1] in ("close", "unsupported")
    located = page.evaluate("JSON.parse(document.getElementById('quote-spans').textContent)")
    assert located and all(q["status"] in ("exact", "close") for q in located)
    wait_until_true(page, f"CSS.highlights.get('evidence') && CSS.highlights.get('evidence').size >= {len(located)}")
    painted = page.evaluate("[...CSS.highlights.get('evidence')].map(r => r.toString())")
    # Each highlight covers the passage its quote names (a quote may cross paragraphs: its pieces joined).
    assert letters("".join(painted)) == letters("".join(q["quote"] for q in located))
    page.locator("#quote-list li").first.get_by_role("button", name="Show").click()
    # The quote is shown inside the document pane once the pane has scrolled to it.
    wait_until_true(page, """(() => {
        const h = CSS.highlights.get('evidence-focus'); if (!h || !h.size) return false;
        const r = [...h][0].getBoundingClientRect();
        const b = document.getElementById('doc-body').getBoundingClientRect();
        return r.height > 0 && r.top >= b.top && r.bottom <= b.bottom; })()""")
    focus = page.evaluate("[...CSS.highlights.get('evidence-focus')].map(r => r.toString()).join('')")
    assert letters(focus) == letters(located[0]["quote"])
    screenshot(page, "evidence-quotes-drill-down")
    assert not problems, problems
