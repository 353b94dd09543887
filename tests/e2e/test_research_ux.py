"""What a researcher sees with only the human-evaluation subset imported: leaderboard, jobs, judge run,
metrics against humans, disagreements, flash messages and the menu, at 1024 and 1280 px wide."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from tests.conftest import REPO_ROOT
from tests.e2e.conftest import JOB_PATIENCE_MS, screenshot, server_env, sign_in, start_server, stop_server
from tests.e2e.test_results import score_file
from tests.support.openai_stub import StubOpenAIServer

pytestmark = pytest.mark.e2e

HUMAN_EVAL = REPO_ROOT / "data" / "demo" / "human_eval"
SYSTEMS = ("balanced-34b", "shaky-3b", "terse-13b", "verbose-7b")
JUDGED, BASELINE = "balanced-34b", "shaky-3b"
IMPORTED_SYSTEMS = SYSTEMS  # every system of the folder: import-leval queues each one's metrics
THOUSANDS = re.compile(r"^\d{1,3}(,\d{3})*$")


def run(server, *args: str, env: dict | None = None, input: str | None = None) -> str:
    result = subprocess.run([sys.executable, "run.py", *args], cwd=REPO_ROOT, input=input, capture_output=True,
                            text=True, timeout=300, env={**server_env(server.instance), **(env or {})})
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def subset_server(tmp_path_factory):
    """No demo: only the subset's reference file and four systems' answers, scored, in one study with three
    annotators' scores, and one judge run that covers one system."""
    instance = tmp_path_factory.mktemp("subset") / "instance"
    server = start_server(instance, {"LEVAL_DEMO": "0"})
    try:
        run(server, "import-leval", str(HUMAN_EVAL))
        run(server, "score-metrics")
        run(server, "study", "create", "Subset", "--questions", "human_eval", "--systems", ",".join(SYSTEMS),
            "--open")
        server.study_id = json.loads(run(server, "study", "show", "Subset", "--json"))["id"]  # pages take ids
        for name in ("ann1", "ann2", "ann3"):
            run(server, "create-user", name, "--role", "annotator", "--password-stdin", input="annotate-pass-1\n")
        run(server, "import-annotations", str(score_file(instance.parent / "scores.jsonl")), "--study", "Subset")
        with StubOpenAIServer() as stub:
            run(server, "judge", JUDGED, "--battle-with", BASELINE, "--scope", "human_eval",
                env={"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "sk-e2e-0123456789abcdef"})
        yield server
    finally:
        stop_server(server)


def open_page(browser, server, width: int = 1280, height: int = 800):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    sign_in(page, server.url, server.admin_user, server.admin_password)
    return context, page


def in_viewport(page, locator) -> bool:
    box = locator.bounding_box()
    size = page.viewport_size
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= size["height"] \
        and box["x"] >= 0 and box["x"] + box["width"] <= size["width"]


def uncovered(locator) -> bool:
    """Whether the element itself is what the browser shows at its centre (no sticky bar over it)."""
    return locator.evaluate("""el => { const r = el.getBoundingClientRect();
        const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return top !== null && (el === top || el.contains(top)); }""")


def no_sideways_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def test_leaderboard_shows_the_subset_when_it_is_all_there_is(browser, subset_server):
    """Item 7: with only the subset imported its F1, ROUGE-L, length, ΔL and judge win % are the board."""
    context, page = open_page(browser, subset_server, 1024, 768)
    try:
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Leaderboard").click()
        group = page.locator("#group-subset")
        expect(group).to_contain_text("Human-evaluation subset")
        rows = page.locator("table.leaderboard tbody tr")
        expect(rows).to_have_count(4)
        f1 = [rows.nth(i).locator('[data-subset-metric="f1"]').inner_text() for i in range(4)]
        assert all(re.fullmatch(r"\d+\.\d\d", value) for value in f1), f1
        assert [float(v) for v in f1] == sorted((float(v) for v in f1), reverse=True)  # sorted by the subset's F1
        # The subset's columns come first, so they are read without scrolling sideways at 1024 px.
        first = rows.first
        for metric in ("f1", "rougeL", "avg_words", "delta_words", "judge"):
            assert in_viewport(page, first.locator(f'[data-subset-metric="{metric}"]')), metric
        judged = page.locator(f'tr[data-system="{JUDGED}"] [data-subset-metric="judge"]')
        assert re.match(r"\d+\.\d\d\s+vs " + BASELINE, judged.inner_text()), judged.inner_text()
        assert page.locator(f'tr[data-system="{BASELINE}"] [data-subset-metric="judge"]').inner_text() == "—"
        assert not page.get_by_text("not scored").count()
        screenshot(page, "research-leaderboard-subset")

        # Item 15: the drill-down shows a word count as a whole number.
        page.locator(f'tr[data-system="{JUDGED}"] [data-subset-metric="avg_words"] a').click()
        values = page.locator('[data-field="value"]')
        expect(values.first).to_be_visible()
        texts = [values.nth(i).inner_text() for i in range(values.count())]
        assert texts and all(re.fullmatch(r"\d[\d,]*", t) for t in texts), texts
        others = page.locator(".qv-others").first.inner_text()
        assert re.search(r"Prediction words \d+( |$)", others) and ".00" not in others.split("Prediction words")[1], others
    finally:
        context.close()


def test_judge_run_page_formats_tokens_explains_calls_and_fits_1024(browser, subset_server):
    """Item 15: grouped token counts, what "answered without a call" means, no sideways scroll at 1024 px."""
    context, page = open_page(browser, subset_server, 1024, 768)
    try:
        page.goto(subset_server.url + "/judge")
        page.locator('a[href*="/judge/runs/"]').first.click()
        expect(page.get_by_role("heading", name="Usage")).to_be_visible()
        assert no_sideways_scroll(page)
        tokens = page.locator('[data-metric="tokens"]').inner_text()
        prompt, completion = re.fullmatch(r"(\S+) prompt \+ (\S+) completion", tokens).groups()
        assert THOUSANDS.match(prompt) and THOUSANDS.match(completion), tokens
        assert int(prompt.replace(",", "")) >= 1000 and "," in prompt  # large enough to need grouping
        expect(page.get_by_text("Answered without a call (last attempt)")).to_be_visible()
        note = page.locator('[data-field="cached-note"]')
        expect(note).to_be_visible()
        assert "both orders are then the same prompt and share one call" in note.inner_text()
        box = page.locator("#agg-usage").locator("..").bounding_box()
        assert box["x"] + box["width"] <= 1024
        screenshot(page, "research-judge-run-1024")
    finally:
        context.close()


def test_jobs_list_has_system_kind_start_duration_and_filters(browser, subset_server):
    """Item 9: seven identical rows no more."""
    context, page = open_page(browser, subset_server)
    try:
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Predictions").click()
        for system in ("terse-13b", "verbose-7b"):
            with page.expect_navigation():  # the form's answer: the predictions page again
                page.locator(f'table.systems tr[data-system="{system}"]').get_by_role("button").click()
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Jobs").click()
        table = page.locator("table.jobs")
        expect(table.get_by_role("columnheader")).to_contain_text(["Job", "Kind", "System", "Status", "Started (UTC)",
                                                                   "Duration", "Progress", "Message"])
        judge_row = table.locator('tr[data-kind="judge"]')
        expect(judge_row.locator('[data-field="system"]')).to_have_text(f"{JUDGED} vs {BASELINE}")
        # One metrics job per imported system, queued by import-leval (the clicks above find them done and
        # start no twin): each row names its system.
        metric_rows = table.locator('tr[data-kind="metrics"]')
        expect(metric_rows).to_have_count(len(IMPORTED_SYSTEMS))
        expect(metric_rows.locator('[data-field="status"]')).to_have_text(["done"] * len(IMPORTED_SYSTEMS),
                                                                          timeout=JOB_PATIENCE_MS)
        assert sorted(metric_rows.locator('[data-field="system"]').all_inner_texts()) == sorted(IMPORTED_SYSTEMS)
        for text in metric_rows.locator('[data-field="started"]').all_inner_texts():
            assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", text), text
        for text in metric_rows.locator('[data-field="duration"]').all_inner_texts():
            assert re.fullmatch(r"\d+(\.\d)? s|\d+ min \d\d s", text), text

        page.get_by_label("System").select_option("verbose-7b")
        page.get_by_role("button", name="Filter").click()
        expect(table.locator("tbody tr")).to_have_count(1)
        expect(table.locator('[data-field="system"]')).to_have_text("verbose-7b")
        page.get_by_role("link", name="Clear filters").click()
        page.get_by_label("Kind").select_option("judge")
        page.get_by_role("button", name="Filter").click()
        expect(table.locator("tbody tr")).to_have_count(1)
        expect(table.locator('[data-field="kind"]')).to_have_text("judge")
        page.get_by_label("Kind").select_option("rater")
        page.get_by_role("button", name="Filter").click()
        expect(page.get_by_text("No job matches these filters.")).to_be_visible()
        screenshot(page, "research-jobs-filtered")
    finally:
        context.close()


def test_metrics_vs_humans_ranks_only_measures_covering_two_systems(browser, subset_server):
    """Item 12: a judge run of one system is not ranked, the 7-system threshold is said once, and Keyword F1 says
    why it has no value."""
    context, page = open_page(browser, subset_server)
    try:
        page.goto(subset_server.url + f"/results/correlation?study={subset_server.study_id}")
        rows = page.locator("#correlations tbody tr")
        judge = rows.filter(has_text="Judge gpt-4")
        expect(judge).to_have_count(1)
        assert judge.get_attribute("data-ranked") == "no" and "has-warning" not in (judge.get_attribute("class") or "")
        expect(judge.locator("td").last).to_have_text("Not ranked: covers 1 system")
        assert page.locator("body").inner_text().count("must reach") == 1
        missing = page.locator("#missing-measures")
        expect(missing).to_contain_text("Keyword F1 (LV-Eval): no keyword annotations on these questions")
        assert "run the metric jobs" not in missing.inner_text()
        # The rank chart draws no column for the judge, and no rank in the table is flagged for it.
        chart_columns = page.locator("#chart-ranks .chart-column-label").evaluate_all("els => els.map(e => e.textContent)")
        assert chart_columns and not any(label.startswith("Judge") for label in chart_columns), chart_columns
        headers = page.locator("#ranks thead th").all_inner_texts()
        judge_column = next(i for i, h in enumerate(headers) if h.startswith("Judge"))
        judged_cell = page.locator(f"#ranks tbody tr:has(td:text-is('{JUDGED}')) td").nth(judge_column)
        assert judged_cell.locator(".rank").count() == 0 and judged_cell.locator(".rank-off").count() == 0
        assert re.fullmatch(r"– \(\d+\.\d\d\)", judged_cell.inner_text().strip()), judged_cell.inner_text()
        screenshot(page, "research-correlation")
    finally:
        context.close()


def test_a_disagreement_opens_the_question_with_its_answers(browser, subset_server):
    """Item 13: each row links to a read-only view: answers, each annotator's score, metric values."""
    context, page = open_page(browser, subset_server)
    try:
        page.goto(subset_server.url + f"/results/disagreements?study={subset_server.study_id}&metric=f1")
        first = page.locator("li.disagreement").first
        question = first.locator("p.question").inner_text()
        first.locator('a[data-link="question"]').click()
        expect(page.get_by_role("heading", name="The answers to one question")).to_be_visible()
        expect(page.locator('[data-field="question"]')).to_have_text(question)
        table = page.locator("#answer-scores")
        expect(table.locator("tbody tr")).to_have_count(4)
        headers = table.locator("thead th").all_inner_texts()
        assert headers[:4] == ["System", "ann1", "ann2", "ann3"] and "F1" in headers and "ROUGE-L" in headers
        first_row = table.locator("tbody tr").first
        assert re.fullmatch(r"[1-5]", first_row.locator('[data-annotator="ann1"]').inner_text())
        assert re.fullmatch(r"\d+\.\d\d", first_row.locator('[data-metric="F1"]').inner_text())
        answers = page.locator("section.answer-card")
        expect(answers).to_have_count(4)
        expect(answers.first.locator('[data-field="answer"]')).to_be_visible()
        assert page.locator("form").filter(has=page.locator('button:not(.link-button)')).count() == 0  # read-only
        screenshot(page, "research-disagreement-question")
    finally:
        context.close()


def test_flash_message_is_in_view_after_a_form_that_returns_to_a_section(browser, subset_server):
    """Item 14: "Save systems" returns to #systems; its confirmation must be on screen there."""
    context, page = open_page(browser, subset_server, 1024, 600)
    try:
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Studies").click()
        page.get_by_role("link", name="Subset").first.click()
        with page.expect_navigation():
            page.get_by_role("button", name="Save systems").click()
        assert page.url.endswith("#systems")
        message = page.get_by_role("status").filter(has_text="Systems saved.")
        expect(message).to_be_visible()
        assert page.evaluate("window.scrollY") > 0  # the page did scroll to the section…
        assert in_viewport(page, message) and uncovered(message)  # …and the message came with it
        heading = page.get_by_role("heading", name="Systems", exact=True)
        assert in_viewport(page, heading) and uncovered(heading)
        screenshot(page, "research-flash-in-section")
    finally:
        context.close()


def test_admin_menu_item_is_current_on_its_page(browser, subset_server):
    """Item 16."""
    context, page = open_page(browser, subset_server)
    try:
        menu = page.get_by_role("navigation", name="Main")
        menu.get_by_role("link", name="Admin").click()
        expect(page).to_have_url(re.compile(r"/admin"))
        admin = menu.get_by_role("link", name="Admin")
        expect(admin).to_have_attribute("aria-current", "page")
        style = "el => [getComputedStyle(el).backgroundColor, getComputedStyle(el).fontWeight]"
        assert admin.evaluate(style) != menu.get_by_role("link", name="Jobs").evaluate(style)
        assert menu.locator('[aria-current="page"]').count() == 1
    finally:
        context.close()
