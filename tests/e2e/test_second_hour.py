"""Issue 40, "the second hour": what a researcher and annotators meet after the README's first study is open,
in Chromium at 1400, 1024 and 390 px where layout is involved.

One server follows the README on a fresh instance: its first run loads the demo and prints the admin; it imports
L-Eval's human-evaluation subset, creates alice and bob, opens the README's study with `--annotators alice,bob
--overlap 2 --open`, imports the whole checkout (for Table 2) and scores it all, runs the README's judge (against
a local stub) and reads two annotators' scores back (systems in tied pairs, so the rank chart has ties).
"""
from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, sign_in, start_server, stop_server
from tests.e2e.test_research_ux import run
from tests.support.openai_stub import StubOpenAIServer
from tests.support.shared import HUMAN_EVAL, SHARED_LEVAL, require_shared

pytestmark = pytest.mark.e2e

STUDY = "L-Eval human evaluation"
PASSWORD = "annotate-pass-1"
WIDTHS = (1400, 1024, 390)
HEIGHT = {1400: 900, 1024: 768, 390: 844}


# Mean human score by system: three tied pairs (each pair's scores equal on every question) and one alone.
QUALITY = {"gpt4-32k": 4, "claude-100k": 4, "turbo-16k-0613": 3, "chatglm2-6b-8k": 3, "longchat-13b-16k-flash": 2,
           "llama2-13b-chat-4k": 2, "vicuna-7b-2k": 1}


def tied_scores(path):
    rows = []
    for annotator, lift in (("alice", 0), ("bob", 1)):
        for system, quality in QUALITY.items():
            lines = (HUMAN_EVAL / f"{system}.pred.jsonl").read_text(encoding="utf-8").splitlines()
            for i, line in enumerate(lines):
                item = json.loads(line)
                score = max(1, min(5, quality + (lift if i % 3 == 0 else 0)))
                rows.append({"annotator": annotator, "system": system, "query": item["query"], "gt": item["gt"],
                             "score": score, "round": 1, "comment": "", "seconds_spent": 20.0})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory):
    require_shared()
    instance = tmp_path_factory.mktemp("walkthrough") / "instance"
    server = start_server(instance)  # a real first run: migrations, the demo, the admin's printed password
    try:
        run(server, "import-leval", str(HUMAN_EVAL))
        for name in ("alice", "bob"):
            run(server, "create-user", name, "--role", "annotator", "--password-stdin", input=PASSWORD + "\n")
        run(server, "study", "create", STUDY, "--questions", "human_eval", "--annotators", "alice,bob",
            "--overlap", "2", "--open")
        run(server, "import-leval", str(SHARED_LEVAL))  # the whole checkout, for Table 2 (README, step 8)
        run(server, "score-metrics")
        with StubOpenAIServer() as stub:
            run(server, "judge", "chatglm2-6b-8k", "--battle-with", "turbo-16k-0613",
                env={"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "sk-e2e-0123456789abcdef"})
        shown = json.loads(run(server, "study", "show", STUDY, "--json"))
        server.study_id = shown["id"]
        server.twin_questions = [entry["question_id"] for entry in shown["identical_answers_across_systems"]]
        run(server, "import-annotations", str(tied_scores(instance.parent / "scores.jsonl")), "--study", STUDY)
        yield server
    finally:
        stop_server(server)


def open_page(browser, server, width: int, user: str | None = None):
    context = browser.new_context(viewport={"width": width, "height": HEIGHT.get(width, 900)})
    page = context.new_page()
    page.set_default_timeout(15_000)
    if user is None:
        sign_in(page, server.url, server.admin_user, server.admin_password)
    else:
        sign_in(page, server.url, user, PASSWORD)
    return context, page


def question_page(server) -> str:
    """A question's scoring page (alice and bob have scored everything: /annotate/ says so instead)."""
    return f"{server.url}/annotate/{server.study_id}/q/{server.twin_questions[0]}"


def no_sideways_scroll(page) -> None:
    width = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width[0] <= width[1], f"the page scrolls sideways: {width[0]} px wide in a {width[1]} px window"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_reply_format_tile_reads_as_a_sentence(browser, walkthrough, width):
    """Item 3: the "Reply format" tile of the rater's and the judge's evidence profile printed a sentence in the
    big-number font of the tiles beside it."""
    context, page = open_page(browser, walkthrough, width)
    for path in ("/judge/rater", "/judge/"):
        page.goto(walkthrough.url + path)
        tiles = page.locator("#evidence-defaults .stat")
        number = tiles.filter(has_text="Quotes per answer").locator("dd")
        sentence = tiles.filter(has_text="Reply format").locator("dd")
        expect(sentence).to_be_visible()
        size = lambda locator: float(locator.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))  # noqa: E731
        body = float(page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)"))
        assert size(sentence) <= body < size(number), (path, size(sentence), body, size(number))
        tile = tiles.filter(has_text="Reply format").bounding_box()
        text = sentence.bounding_box()
        assert text["x"] + text["width"] <= tile["x"] + tile["width"] + 1, (path, text, tile)
    screenshot(page, f"second-hour-reply-tile-{width}")
    context.close()


def fits(page, selector: str) -> None:
    """Every element of the selector shows its whole text: nothing cut by an ellipsis or its box."""
    cut = page.evaluate("""s => [...document.querySelectorAll(s)].filter(e => e.offsetParent !== null
        && e.scrollWidth > e.clientWidth + 1).map(e => e.className + ': ' + e.textContent.trim())""", selector)
    assert cut == [], cut


@pytest.mark.parametrize("width", WIDTHS)
def test_identical_answers_show_once_on_the_annotators_page(browser, walkthrough, width):
    """Item 4: a question on which two systems gave the same answer shows it once, and nothing says so."""
    assert walkthrough.twin_questions, "L-Eval's subset has questions with identical answers"
    context, page = open_page(browser, walkthrough, width, user="alice")
    for question_id in walkthrough.twin_questions:
        page.goto(f"{walkthrough.url}/annotate/{walkthrough.study_id}/q/{question_id}")
        answers = page.locator("article.answer[data-answer]")
        expect(answers.first).to_be_visible()
        shas = answers.evaluate_all("els => els.map(e => e.dataset.answer)")
        assert len(shas) == len(set(shas)) < 7  # fewer answers than systems, none twice
        text = page.locator("main").inner_text().lower()
        assert "identical" not in text and "same answer" not in text and "several systems" not in text
    expect(page.locator("#progress-count")).to_have_text("589 of 589")  # 595 answers, 6 shown through another
    no_sideways_scroll(page)
    screenshot(page, f"second-hour-identical-{width}")
    context.close()


STAFF_PAGES = ["/", "/studies", f"/studies/STUDY", "/predictions", "/jobs/", "/leaderboard", "/lveval", "/results/",
               "/results/correlation", "/results/agreement", "/results/disagreements", "/results/table2",
               "/results/exports", "/results/length-instruction", "/judge/", "/judge/rater", "/judge/prompts",
               "/generate/", "/admin/users", "/account/"]


def test_no_page_runs_off_a_phone(browser, walkthrough):
    """Item 8: at 390 px the admin's menu ran to 1,001 px and the annotator's page to 418 px."""
    context, page = open_page(browser, walkthrough, 390)
    phone_padded = 0
    for path in STAFF_PAGES:
        page.goto(walkthrough.url + path.replace("STUDY", str(walkthrough.study_id)))
        no_sideways_scroll(page)
        links = page.locator(".mainnav a")
        assert links.count() >= 10
        for box in links.evaluate_all("els => els.map(e => e.getBoundingClientRect().right)"):
            assert box <= 390, (path, box)
        # A page's text starts 12 px from the edge (the phone's padding), not the desktop's 20.
        if page.locator(".page").count():
            padding = page.locator(".page").first.evaluate("e => getComputedStyle(e).paddingLeft")
            assert padding == "12px", (path, padding)
            phone_padded += 1
    assert phone_padded >= 3
    screenshot(page, "second-hour-menu-390")
    context.close()
    context, page = open_page(browser, walkthrough, 390, user="alice")
    page.goto(question_page(walkthrough))
    expect(page.locator("#doc-find-input")).to_be_visible()
    no_sideways_scroll(page)
    for selector in ("#doc-find-prev", "#doc-find-next", "#doc-find-input"):
        box = page.locator(selector).bounding_box()
        assert box["x"] + box["width"] <= 390, (selector, box)
    screenshot(page, "second-hour-annotate-390")
    context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_document_header_is_read_whole(browser, walkthrough, width):
    """Item 8: at 1024 px the document header cut the task and length ("narrative_qa · 42,…")."""
    context, page = open_page(browser, walkthrough, width, user="alice")
    page.goto(question_page(walkthrough))
    meta = page.locator(".doc-meta")
    expect(meta).to_contain_text("words")
    fits(page, ".doc-title, .doc-meta, .workbar-doc, .workbar-step")
    panel = page.locator("#doc-panel").bounding_box()
    find = page.locator("#doc-find").bounding_box()
    assert find["x"] >= panel["x"] - 1 and find["x"] + find["width"] <= panel["x"] + panel["width"] + 1
    meta_box = meta.bounding_box()
    assert not (meta_box["y"] < find["y"] + find["height"] and find["y"] < meta_box["y"] + meta_box["height"]
                and meta_box["x"] < find["x"] + find["width"] and find["x"] < meta_box["x"] + meta_box["width"])
    no_sideways_scroll(page)
    screenshot(page, f"second-hour-doc-head-{width}")
    context.close()


@pytest.mark.parametrize("width", (1400, 1024))
def test_the_leaderboards_subset_group_fits(browser, walkthrough, width):
    """Item 8: at 1024 px the Leaderboard's human-evaluation group (its judge column last) was cut."""
    context, page = open_page(browser, walkthrough, width)
    page.goto(walkthrough.url + "/leaderboard")
    table = page.locator("table.leaderboard")
    expect(table.locator('th[data-subset-metric="judge"]')).to_be_visible()
    scroll = table.evaluate("t => { const b = t.closest('.table-scroll'); return [b.scrollWidth, b.clientWidth]; }")
    assert scroll[0] <= scroll[1], scroll
    box = table.locator("xpath=ancestor::div[contains(@class,'table-scroll')][1]").bounding_box()
    for header in table.locator("th.group-subset").all():
        edge = header.bounding_box()
        assert edge["x"] + edge["width"] <= box["x"] + box["width"] + 1, header.inner_text()
    no_sideways_scroll(page)
    screenshot(page, f"second-hour-leaderboard-{width}")
    context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_keyboard_help_keeps_each_key_apart_from_its_action(browser, walkthrough, width):
    """Item 10: "0, Backspace or Delete" ran into its action at 1024 px."""
    context, page = open_page(browser, walkthrough, width, user="alice")
    page.goto(question_page(walkthrough))
    expect(page.locator("#doc-find-input")).to_be_visible()
    page.keyboard.press("?")
    expect(page.locator(".shortcut-list")).to_be_visible()
    clashes = page.evaluate("""() => [...document.querySelectorAll('.shortcut-list > div')].map(d => {
        const k = d.querySelector('dt').getBoundingClientRect(), a = d.querySelector('dd').getBoundingClientRect();
        const apart = k.right <= a.left + 0.5 || k.bottom <= a.top + 0.5;
        return apart && d.querySelector('dt').scrollWidth <= d.querySelector('dt').clientWidth + 1 ? null
               : d.querySelector('dt').textContent.trim(); }).filter(Boolean)""")
    assert clashes == [], clashes
    screenshot(page, f"second-hour-keys-{width}")
    context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_tied_systems_and_whole_names_in_the_charts(browser, walkthrough, width):
    """Item 9: tied systems stacked on one dot of the rank chart; scatter labels were cut ("llama2-13b-chat…")."""
    context, page = open_page(browser, walkthrough, width)
    page.goto(walkthrough.url + "/results/correlation")
    dots = page.locator("#chart-ranks circle.chart-rank-point")
    expect(dots.first).to_be_attached()
    boxes = dots.evaluate_all("els => els.map(e => { const r = e.getBoundingClientRect(); "
                              "return [r.x + r.width / 2, r.y + r.height / 2, r.width / 2]; })")
    assert len(boxes) >= 2 * len(QUALITY)
    for i, (x1, y1, r1) in enumerate(boxes):
        for x2, y2, r2 in boxes[i + 1:]:
            assert (x1 - x2) ** 2 + (y1 - y2) ** 2 >= (r1 + r2 - 0.5) ** 2, ((x1, y1), (x2, y2))
    human = page.locator("#chart-ranks circle.chart-rank-point title").all_text_contents()
    assert sum(1 for t in human if "Human: rank 1.5" in t) == 2  # a tie drawn as two dots
    scatter = page.locator('svg[id^="chart-scatter-"]').first
    labels = scatter.locator("text.chart-point-label")
    names = labels.evaluate_all("els => els.map(e => e.firstChild.textContent)")
    assert sorted(names) == sorted(QUALITY)
    frame = scatter.bounding_box()
    for box in labels.evaluate_all("els => els.map(e => { const r = e.getBoundingClientRect(); "
                                   "return [r.left, r.right]; })"):
        assert frame["x"] - 1 <= box[0] and box[1] <= frame["x"] + frame["width"] + 1, (box, frame)
    no_sideways_scroll(page)
    screenshot(page, f"second-hour-charts-{width}")
    context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_overview_after_the_first_start(browser, walkthrough, width):
    """Item 10: Markdown backticks, "admin admin", and no step to change the printed password."""
    context, page = open_page(browser, walkthrough, width)
    page.goto(walkthrough.url + "/")
    steps = page.locator(".next-steps li")
    expect(steps.first).to_contain_text("Change your password")
    text = page.locator("main").inner_text()
    assert "`" not in text and "admin admin" not in page.locator(".topbar").inner_text()
    assert "admin (admin)" not in text
    no_sideways_scroll(page)
    screenshot(page, f"second-hour-overview-{width}")
    context.close()


def test_table2_after_the_readme_path(browser, walkthrough):
    """Item 2: after the README's path (the subset, then the whole checkout) Table 2 has rows."""
    context, page = open_page(browser, walkthrough, 1400)
    page.goto(walkthrough.url + "/results/table2")
    rows = page.locator("#table2 tbody tr")
    expect(rows.first).to_be_visible()
    assert {"turbo-16k-0613", "llama2-13b-chat-4k"} <= set(rows.evaluate_all("rs => rs.map(r => r.dataset.system)"))
    expect(page.locator('.segmented a[aria-current="true"]').last).not_to_have_text("")
    context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_new_study_form_looks_finished(browser, walkthrough, width):
    """Item 7: thin unstyled inputs and a truncated select, legends across their borders, no default for "Who may
    score", the adaptive fields shown while "Fixed" is chosen, Cancel under the main button; and no choice of
    systems (now one checkbox each, checked) or of showing identical answers once (checked)."""
    context, page = open_page(browser, walkthrough, width)
    page.goto(walkthrough.url + "/studies/new")
    expect(page.locator('input[name="scorers"]:checked')).to_have_value("listed")
    expect(page.locator('input[name="identical"]')).to_be_checked()
    systems = page.locator('#systems input[name="system"]')
    assert systems.count() >= 7 and systems.evaluate_all("els => els.every(e => e.checked)")
    expect(page.locator("#study-overlap")).to_be_visible()
    expect(page.locator("#study-budget-documents")).to_be_hidden()
    page.locator('input[name="allocation"][value="adaptive"]').check()
    expect(page.locator("#study-budget-documents")).to_be_visible()
    expect(page.locator("#study-overlap")).to_be_hidden()
    for field in page.locator(".study-form input[type=text], .study-form select, .study-form textarea").all():
        if field.is_visible():
            box = field.bounding_box()
            assert box["height"] >= 30, (field.get_attribute("name"), box)
    cut = page.evaluate("""() => [...document.querySelectorAll('.study-form select')].filter(s => {
        const c = document.createElement('canvas').getContext('2d'), style = getComputedStyle(s);
        c.font = style.font; return c.measureText(s.options[s.selectedIndex].text).width + 16 > s.clientWidth;
    }).map(s => s.name)""")
    assert cut == [], cut
    crossing = page.evaluate("""() => [...document.querySelectorAll('.study-form fieldset')].filter(f =>
        f.offsetParent !== null).map(f => [f, f.querySelector(':scope > legend')]).filter(([f, l]) => {
        const a = f.getBoundingClientRect(), b = l.getBoundingClientRect();
        return b.left < a.left - 0.5 || b.right > a.right + 0.5; }).map(([f, l]) => l.textContent.trim())""")
    assert crossing == [], crossing
    create, cancel = page.locator(".form-actions button.primary").bounding_box(), \
        page.locator(".form-actions a.button").bounding_box()
    assert abs(create["y"] - cancel["y"]) < 2 and cancel["x"] >= create["x"] + create["width"], (create, cancel)
    no_sideways_scroll(page)
    screenshot(page, f"second-hour-new-study-{width}")
    context.close()
