"""Wide results tables with L-Eval's human-evaluation subset (7 systems) at 1400 and 1024 px: what fits,
what scrolls and what stays in view; Table 2's judge profile; the leaderboard's judge columns; the top bar
and the question page at 1024 px."""
from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import painted, screenshot, sign_in, start_server, stop_server
from tests.e2e.test_research_ux import run
from tests.support.live import InstanceDatabase, instance_database_url
from tests.support.openai_stub import StubOpenAIServer
from tests.support.shared import HUMAN_EVAL, SHARED_LEVAL, require_shared

pytestmark = pytest.mark.e2e

JUDGED, BASELINE = "gpt4-32k", "turbo-16k-0613"
TASK_SYSTEMS = ("llama2-13b-chat-4k", "turbo-16k-0613")
QUALITY = {"gpt4-32k": 4.6, "claude-100k": 4.3, "turbo-16k-0613": 3.9, "chatglm2-6b-8k": 3.0,
           "longchat-13b-16k-flash": 2.7, "llama2-13b-chat-4k": 2.4, "vicuna-7b-2k": 1.8}


def leval_scores(path):
    """Two annotators' scores of the subset's answers: a fixed order of quality, so the ranks are known."""
    rows = []
    for a, annotator in enumerate(("ann1", "ann2")):
        for system, quality in QUALITY.items():
            lines = (HUMAN_EVAL / f"{system}.pred.jsonl").read_text(encoding="utf-8").splitlines()
            for i, line in enumerate(lines[:20]):
                item = json.loads(line)
                score = max(1, min(5, round(quality + ((i + a) % 3 - 1) * 0.4)))
                rows.append({"annotator": annotator, "system": system, "query": item["query"], "gt": item["gt"],
                             "score": score, "round": 1, "answer_label": "ABCD"[(i + a) % 4], "comment": "",
                             "seconds_spent": 30.0})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


SERVER_DATABASE: dict[int, str] = {}


@pytest.fixture(scope="module")
def leval_server(tmp_path_factory):
    """No demo: L-Eval's human_eval subset (7 systems) and two systems' open-ended tasks, scored, one study with two annotators' scores, and one
    default-profile judge run of one system on the subset."""
    require_shared()
    instance = tmp_path_factory.mktemp("leval-tables") / "instance"
    server = start_server(instance, {"LEVAL_DEMO": "0"})
    # The server's own database: on PostgreSQL each test gets another LEVAL_DATABASE_URL, this module's
    # tests share this one.
    SERVER_DATABASE[id(server)] = instance_database_url(instance)
    try:
        run(server, "import-leval", str(HUMAN_EVAL))
        # Two of the seven systems also answered L-Eval's open-ended tasks: Table 2 has 13 tasks, the
        # leaderboard has task scores for two systems and none for the other five.
        run(server, "import-leval", str(SHARED_LEVAL / "LEval-data" / "Open-ended-tasks"))
        for system in TASK_SYSTEMS:
            run(server, "import-leval", str(SHARED_LEVAL / "Predictions" / "ngram_eval" / system))
        run(server, "score-metrics")
        run(server, "study", "create", "L-Eval", "--questions", "human_eval", "--systems", ",".join(QUALITY), "--open")
        for name in ("ann1", "ann2"):
            run(server, "create-user", name, "--role", "annotator", "--password-stdin", input="annotate-pass-1\n")
        run(server, "import-annotations", str(leval_scores(instance.parent / "scores.jsonl")), "--study", "L-Eval")
        with StubOpenAIServer() as stub:
            run(server, "judge", JUDGED, "--battle-with", BASELINE, "--scope", "human_eval",
                env={"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "sk-e2e-0123456789abcdef"})
        yield server
    finally:
        stop_server(server)


def open_page(browser, server, width, height, user=None, password=None):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    sign_in(page, server.url, user or server.admin_user, password or server.admin_password)
    return context, page


def fit(table) -> dict:
    """The table's width, its scroll box's visible width, and its empty column headers."""
    return table.evaluate("""t => { const box = t.closest('.table-scroll, .table-wrap');
        const last = t.tHead.rows[t.tHead.rows.length - 1];
        return {table: Math.round(t.getBoundingClientRect().width), box: Math.round(box.clientWidth),
                scroll: box.scrollWidth,
                emptyHeads: [...last.cells].filter(c => !c.textContent.trim()).length}; }""")


def empty_columns(table) -> list[str]:
    """Headers (of the last header row) whose column is empty or a dash in every body row; a body cell
    belongs to the header it lines up with."""
    return table.evaluate("""t => { const heads = [...t.tHead.rows[t.tHead.rows.length - 1].cells];
        const rows = [...t.tBodies[0].rows];
        const left = c => Math.round(c.getBoundingClientRect().left);
        return heads.filter(h => rows.every(r => { const c = [...r.cells].find(c => left(c) === left(h));
            return !c || ['', '—', '–', '— · — · —'].includes(c.textContent.trim()); }))
          .map(h => h.textContent.trim()); }""")


def name_lines(table) -> list[int]:
    """How many lines each row's system name takes."""
    return table.evaluate("""t => [...t.tBodies[0].rows].map(r => { const range = document.createRange();
        range.selectNodeContents(r.cells[0].querySelector('a') || r.cells[0]);
        return new Set([...range.getClientRects()].map(b => Math.round(b.top))).size; })""")


def first_column_stays(page, table) -> None:
    """Scroll the table's box right: the first column's cell is still where it was, inside the box."""
    box = table.locator("xpath=ancestor::div[contains(@class,'table-')][1]")
    cell = table.locator("tbody tr").first.locator("th, td").first
    before = cell.bounding_box()
    box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
    painted(page)
    after = cell.bounding_box()
    frame = box.bounding_box()
    assert box.evaluate("b => b.scrollLeft") > 0
    assert abs(after["x"] - before["x"]) < 2, (before, after)
    assert after["x"] >= frame["x"] - 1 and after["x"] + after["width"] <= frame["x"] + frame["width"] + 1
    assert cell.evaluate("c => getComputedStyle(c).backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")


TABLES = {"leaderboard": ("/leaderboard", "table.leaderboard"),
          "ranks": ("/results/correlation", "#ranks"),
          "table2": ("/results/table2", "#table2")}


@pytest.mark.parametrize("name", TABLES)
def test_wide_tables_fit_at_1400_and_keep_the_system_in_view_at_1024(browser, leval_server, name):
    """Item 3: at 1400 px the table fits its box (no sideways scroll); no column is empty for every system;
    at 1024 px a table that still scrolls keeps its first column (the system) in view."""
    path, selector = TABLES[name]
    context, page = open_page(browser, leval_server, 1400, 900)
    page.goto(leval_server.url + path)
    table = page.locator(selector)
    expect(table).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(7)
    measured = fit(table)
    print(name, 1400, measured)
    assert measured["emptyHeads"] == 0, measured
    assert empty_columns(table) == [], empty_columns(table)
    assert max(name_lines(table)) <= 2, name_lines(table)  # "longchat-13b-16k-flash" wrapped to three lines before
    if name == "table2":
        # Thirteen tasks of three columns cannot fit: the system, the length instruction and the first task's
        # three columns are in view without scrolling, and the system stays in view when it scrolls.
        right = table.locator("xpath=..").bounding_box()
        for head in (table.locator("thead th").nth(0), table.locator("thead th").nth(1),
                     table.locator("thead tr").nth(1).locator("th").nth(2)):
            box = head.bounding_box()
            assert box["x"] + box["width"] <= right["x"] + right["width"], (head.inner_text(), box, right)
        first_column_stays(page, table)
    else:
        assert measured["scroll"] <= measured["box"], measured
    screenshot(page, f"wide-{name}-1400")
    context.close()

    context, page = open_page(browser, leval_server, 1024, 768)
    page.goto(leval_server.url + path)
    table = page.locator(selector)
    measured = fit(table)
    print(name, 1024, measured)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    if measured["scroll"] > measured["box"]:
        first_column_stays(page, table)
    screenshot(page, f"wide-{name}-1024")
    context.close()


def test_table2_opens_on_a_judge_profile_with_runs_and_says_what_is_missing(browser, leval_server):
    """Item 10: with only a default-profile run, Table 2 opens on it; what is missing is said above the table."""
    context, page = open_page(browser, leval_server, 1400, 900)
    page.goto(leval_server.url + "/results/table2")
    expect(page.locator('[data-field="judge-profile"]')).to_have_text("default")
    table = page.locator("#table2")
    win_rates = table.locator(f'tr[data-system="{JUDGED}"] [data-cell$=":win_rate"]').all_inner_texts()
    assert any(re.fullmatch(r"\d+\.\d\d", text) for text in win_rates), win_rates
    missing = page.locator('[data-field="table2-missing"]')
    expect(missing).to_contain_text("6 of 7 systems have no default judge run")
    box = missing.bounding_box()
    assert box["y"] + box["height"] <= 900 and box["y"] < table.bounding_box()["y"]
    # Asking for the leval profile still works, and says why its cells are empty.
    page.get_by_role("link", name="leval", exact=True).click()
    expect(page.locator('[data-field="judge-profile"]')).to_have_text("leval")
    expect(missing).to_contain_text("No system has a leval judge run")
    assert missing.bounding_box()["y"] + missing.bounding_box()["height"] <= 900
    context.close()


def test_leaderboard_keeps_the_subset_judge_rate_out_of_the_task_columns(browser, leval_server):
    """Item 12: a judge win rate on the subset shows under the subset's own heading, never under L-Eval tasks."""
    context, page = open_page(browser, leval_server, 1400, 900)
    page.goto(leval_server.url + "/leaderboard")
    row = page.locator(f'tr[data-system="{JUDGED}"]')
    expect(row.locator('[data-subset-metric="judge"]')).to_contain_text(re.compile(r"\d+\.\d\d"))
    heading = page.locator('[data-subset-metric="judge"] a').first
    expect(heading).to_have_text("Subset judge win %")
    assert row.locator('[data-metric="judge"]').count() == 0  # no task-level judge column: nothing in it
    tasks_group = page.locator("#group-tasks")
    assert "judge" not in tasks_group.inner_text().lower()
    # Under the subset's group, not the tasks' group: the judge cell lies within the subset heading's span.
    group = page.locator("#group-subset").bounding_box()
    cell = row.locator('[data-subset-metric="judge"]').bounding_box()
    assert group["x"] - 1 <= cell["x"] and cell["x"] + cell["width"] <= group["x"] + group["width"] + 1
    context.close()


def test_top_bar_is_one_line_and_question_page_readable_at_1024(browser, leval_server):
    """Item 16: the admin's top bar on one line at 1024 px; the question page's title readable, find box usable."""
    context, page = open_page(browser, leval_server, 1024, 768)
    page.goto(leval_server.url + "/leaderboard")
    nav = page.get_by_role("navigation", name="Main")
    links = nav.locator("a")
    heights = {round(links.nth(i).bounding_box()["y"]) for i in range(links.count())}
    assert len(heights) == 1, heights  # every item on one line
    bar = page.locator("header.topbar").bounding_box()
    link = links.first.bounding_box()
    assert bar["height"] <= link["height"] + 24, (bar, link)
    account = page.locator(".account").bounding_box()
    assert abs(account["y"] + account["height"] / 2 - (link["y"] + link["height"] / 2)) < 6
    assert account["x"] + account["width"] <= 1024
    screenshot(page, "topbar-admin-1024")
    context.close()

    context, page = open_page(browser, leval_server, 1024, 768, "ann1", "annotate-pass-1")
    db = InstanceDatabase(SERVER_DATABASE[id(leval_server)])
    (study_id,) = db.execute("SELECT id FROM studies WHERE name = 'L-Eval'").fetchone()
    (question_id,) = db.execute(
        "SELECT q.id FROM questions q JOIN documents d ON d.id = q.document_id "
        "WHERE d.collection = 'human_eval' AND d.task = 'financial' ORDER BY q.position LIMIT 1").fetchone()
    page.goto(f"{leval_server.url}/annotate/{study_id}/q/{question_id}")
    title = page.locator("#doc-title")
    expect(title).to_be_visible()
    clipped = title.evaluate("t => t.scrollWidth > t.clientWidth + 1 || getComputedStyle(t).textOverflow === 'ellipsis'"
                             " && getComputedStyle(t).whiteSpace === 'nowrap'")
    assert not clipped
    find = page.locator('input[type="search"]').first
    assert find.bounding_box()["width"] >= 160, find.bounding_box()
    screenshot(page, "question-page-1024")
    context.close()
