"""In a browser: a leval judge run, its bias probes, the profile differences and L-Eval's Table 2."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import JOB_PATIENCE_MS, screenshot, sign_in, start_server, stop_server
from tests.support.openai_stub import StubOpenAIServer
from tests.services.test_fidelity_judge import scripted

pytestmark = pytest.mark.e2e

KEY = "sk-e2e-fidelity-0123456789"


@pytest.fixture
def judged_server(tmp_path):
    with StubOpenAIServer(policy=lambda body: scripted(body["messages"])) as stub:
        server = start_server(tmp_path / "instance", {"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": KEY})
        try:
            yield server, stub
        finally:
            stop_server(server)


def test_leval_run_bias_probes_and_table2(judged_server, page):
    server, stub = judged_server
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    sign_in(page, server.url, server.admin_user, server.admin_password)

    page.goto(server.url + "/judge/")
    differences = page.locator("details.profile-differences")
    differences.locator("summary").click()
    expect(differences.locator('tr[data-topic="Verdict"]')).to_be_visible()
    expect(differences.locator('tr[data-topic="Verdict"] td').first).to_contain_text('"[[A]]" anywhere')
    page.get_by_label("System under test").select_option("balanced-34b")
    page.get_by_label("Baseline").select_option("shaky-3b")
    page.get_by_label("Profile").select_option("leval")
    page.get_by_role("button", name="Launch").click()
    expect(page).to_have_url(re.compile(r"/judge/runs/\d+$"))
    expect(page.locator(".job-status")).to_have_text(re.compile("done|failed"), timeout=JOB_PATIENCE_MS)
    expect(page.locator('[data-field="profile"]')).to_have_text("leval (L-Eval's llm_eval.py exactly)")
    # L-Eval's request: its prompt, max_tokens 2048, n 1, temperature 0.
    assert stub.calls > 0 and all(r.body["max_tokens"] == 2048 and r.body["n"] == 1 for r in stub.requests)
    assert all(r.body["messages"][1]["content"].startswith("[User Question]\n") for r in stub.requests)
    screenshot(page, "fidelity-leval-run")

    page.locator('[data-link="bias"]').click()
    expect(page.get_by_role("heading", name=re.compile("Bias probes"))).to_be_visible()
    overall = page.locator('tr[data-task="All tasks"]')
    expect(overall.locator('[data-probe="consistency"]')).to_have_text(re.compile(r"\d+\.\d%"))
    expect(page.get_by_text("arXiv:2404.04475")).to_be_visible()
    chart = page.locator("figure.chart svg").first
    expect(chart).to_be_visible()
    box = chart.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 50
    screenshot(page, "fidelity-bias")

    page.goto(server.url + "/results/table2")
    if page.get_by_role("heading", name=re.compile("Which study")).count():
        page.get_by_role("link", name=re.compile("Demo")).first.click()
    expect(page.get_by_role("heading", name="Table 2, live")).to_be_visible()
    table = page.locator("#table2")
    expect(table).to_be_visible()
    expect(table.locator('th[data-task="scientific_qa"]')).to_have_text("scientific_qa")
    expect(table.locator('tr[data-system="balanced-34b"] td').last).to_contain_text("leval")
    cell = table.locator('tr[data-system="terse-13b"] [data-cell="scientific_qa:metric"]')
    expect(cell).to_have_text(re.compile(r"^\d+\.\d\d$"))
    page.get_by_role("link", name="fixed").first.click()
    expect(page.locator('[data-field="metric-profile"]')).to_have_text("fixed")
    screenshot(page, "fidelity-table2")
    assert not failed, failed


RATED_ANSWER = re.compile(r"## The assistant's answer\n(.*)\n\n## End of the answer", re.S)


def _rating(body) -> str:
    import hashlib

    match = RATED_ANSWER.search(body["messages"][-1]["content"])
    return f"Rating: [[{1 + hashlib.sha256(match.group(1).encode()).digest()[0] % 5}]]"


def test_adjacent_system_tests_then_an_llm_rater_run_against_the_annotators(page, tmp_path):
    from tests.e2e.test_results import score_file

    with StubOpenAIServer(policy=_rating) as stub:
        server = start_server(tmp_path / "instance", {"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": KEY})
        try:
            for name in ("ann1", "ann2", "ann3"):
                created = server.cli("create-user", name, "--role", "annotator", "--password-stdin",
                                     input="annotate-pass-1\n")
                assert created.returncode == 0, created.stderr
            imported = server.cli("import-annotations", str(score_file(tmp_path / "scores.jsonl")))
            assert imported.returncode == 0, imported.stdout + imported.stderr
            sign_in(page, server.url, server.admin_user, server.admin_password)
            # Human scores: a paired test between each two adjacent systems, and the groups it cannot split.
            page.goto(server.url + "/results")
            expect(page.get_by_role("heading", name="Are adjacent systems different?")).to_be_visible()
            tests = page.locator("#adjacent-tests tbody tr")
            expect(tests).to_have_count(3)  # 4 systems
            for i in range(3):
                expect(tests.nth(i).locator('[data-field="p_value"]')).to_have_text(re.compile(r"^(<\s?)?[\d.]+"))
                expect(tests.nth(i).locator('[data-field="verdict"]')).to_have_text(
                    re.compile("^(separated|tie: not separable)$"))
            groups = page.locator("#tie-groups [data-group]")
            ties = sum(t == "tie: not separable" for t in
                       page.locator('#adjacent-tests [data-field="verdict"]').all_inner_texts())
            expect(groups).to_have_count(4 - ties)
            page.locator("#adjacent-tests").scroll_into_view_if_needed()
            screenshot(page, "fidelity-adjacent-tests")

            page.goto(server.url + "/judge/")
            page.get_by_role("navigation", name="Judge").get_by_role("link", name="LLM rater").click()
            expect(page.get_by_role("heading", name="Pointwise LLM rater")).to_be_visible()
            page.get_by_role("button", name="Estimate (dry run)").click()
            expect(page.locator('[data-estimate="calls"]')).to_have_text(re.compile(r"^[1-9]\d*$"))
            assert stub.calls == 0  # a dry run makes no call
            screenshot(page, "fidelity-rater-estimate")
            page.get_by_role("button", name="Rate every answer").click()
            # The launch lands on the run's own page, as the judge's does, and it fills in as the job runs.
            expect(page).to_have_url(re.compile(r"/judge/rater/runs/\d+$"))
            expect(page.get_by_role("heading", name=re.compile(r"^Rater run #\d+: gpt-4 on "))).to_be_visible()
            expect(page.locator(".job-status").first).to_have_text("done", timeout=JOB_PATIENCE_MS)
            page.reload()
            expect(page.locator('[data-metric="rated"]')).to_contain_text(re.compile(r"^[1-9]\d* of \d+ answers"))
            assert stub.calls > 0
            page.goto(server.url + "/results/agreement")
            section = page.locator("section.rater-agreement").first
            expect(section).to_be_visible()
            expect(section.locator('[data-field="llm_alpha"]')).to_have_text(re.compile(r"^-?\d\.\d{3}$"))
            expect(section.locator('[data-field="ceiling_mean"]')).to_have_text(re.compile(r"^-?\d\.\d{3}$"))
            expect(section.locator("tr[data-annotator]")).to_have_count(3)
            # The rater is compared with the annotators, never counted among them.
            expect(page.get_by_text("108 scores from 3 annotators")).to_be_visible()
            section.scroll_into_view_if_needed()
            box = section.bounding_box()
            assert box and box["width"] > 400
            screenshot(page, "fidelity-rater-agreement")
            page.goto(server.url + "/results/correlation")
            label = "LLM rater gpt-4 (prompt v1)"
            expect(page.locator("#correlations")).to_contain_text(label)
            ranks = page.locator("#ranks")
            expect(ranks.locator("thead th")).to_contain_text([label])
            column = ranks.locator("thead th").all_inner_texts().index(label)
            cells = ranks.locator(f"tbody tr td:nth-child({column + 1})")
            expect(cells).to_have_count(4)
            for text in cells.all_inner_texts():
                assert re.fullmatch(r"\d(\.\d)? \([1-5]\.\d\d\)", text.strip()), text
        finally:
            stop_server(server)
