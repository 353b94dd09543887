"""The scoring workflow in a real browser: mouse and keyboard scoring, reload, resume,
two annotators at once, begin again, failed saves, find-in-document and the largest L-Eval document."""
from __future__ import annotations

import json
import re
import time

import pytest
from playwright.sync_api import expect

from tests.support.shared import HUMAN_EVAL, require_shared
from tests.e2e.conftest import screenshot, sign_in
from tests.support.live import InstanceDatabase, instance_database

pytestmark = pytest.mark.e2e

QUESTION_URL = re.compile(r"/annotate/\d+/q/(\d+)$")


def make_annotator(server, name: str, password: str = "score-pass-123") -> str:
    result = server.cli("create-user", name, "--role", "annotator", "--password-stdin", input=password + "\n")
    assert result.returncode == 0, result.stderr
    return password


def group(page, label: str):
    return page.get_by_role("radiogroup", name=f"Score for Answer {label}")


def wait_saved(page) -> None:
    expect(page.get_by_role("status")).to_have_text("Saved")


def score_with_mouse(page, values: dict[str, int]) -> None:
    for label, value in values.items():
        with page.expect_response(lambda r: r.url.endswith("/annotate/api/score") and r.ok):
            group(page, label).get_by_role("radio", name=str(value), exact=True).check()
    wait_saved(page)


def expect_scores(page, values: dict[str, int]) -> None:
    for label, value in values.items():
        expect(group(page, label).get_by_role("radio", name=str(value), exact=True)).to_be_checked()


def database(server) -> InstanceDatabase:
    return instance_database(server.instance)


def test_score_with_mouse_and_keyboard_and_find_them_after_reload(live_server, page):
    password = make_annotator(live_server, "alice")
    names = [row[0] for row in database(live_server).execute("SELECT name FROM systems")]
    bodies: list[str] = []
    page.on("response", lambda r: bodies.append(r.url + " " + (r.text() if r.request.resource_type in
                                                                  ("document", "fetch", "xhr") else "")))
    sign_in(page, live_server.url, "alice", password)
    first = QUESTION_URL.search(page.url)
    assert first, page.url
    expect(page.get_by_text("0 of 40")).to_be_visible()
    for label in ("Human reference", "GPT-4-32k reference", "Claude-100k reference"):
        expect(page.get_by_role("heading", name=label)).to_be_visible()
    expect(page.locator(".doc-seg").nth(5)).to_be_attached()

    score_with_mouse(page, {"A": 4, "B": 2, "C": 5, "D": 3})
    page.locator("#answer-A .comment-box summary").click()
    with page.expect_response(lambda r: r.url.endswith("/annotate/api/score") and r.ok):
        page.get_by_label("Comment on Answer A").fill("Precise, cites the bill.")
        page.get_by_label("Comment on Answer A").press("Tab")
    wait_saved(page)
    expect(page.get_by_text("4 of 40")).to_be_visible()
    screenshot(page, "scoring-mouse")

    page.get_by_role("link", name="Next question", exact=True).click()
    page.wait_for_url(lambda url: QUESTION_URL.search(url) is not None and url != first.string)
    second = page.url
    expect(page.locator("#answer-A")).to_be_focused()  # Answer A has the keys on arrival
    for key in ("2", "j", "5", "ArrowDown", "3", "j", "4", "k", "k", "1"):
        page.keyboard.press(key)
    wait_saved(page)
    expect(page.get_by_text("8 of 40")).to_be_visible()
    expect(page.locator("#answer-B")).to_be_focused()
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    screenshot(page, "scoring-keyboard-shortcuts")
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_be_hidden()

    page.reload()
    expect_scores(page, {"A": 2, "B": 1, "C": 3, "D": 4})
    expect(page.get_by_text("8 of 40")).to_be_visible()
    page.get_by_role("link", name="Previous question", exact=True).click()
    page.wait_for_url(first.string)
    expect_scores(page, {"A": 4, "B": 2, "C": 5, "D": 3})
    expect(page.get_by_label("Comment on Answer A")).to_have_value("Precise, cites the bill.")
    screenshot(page, "scoring-after-reload")

    everything = "\n".join(bodies)
    assert "/annotate/api/score" in everything and "Answer A" in everything
    for name in names:
        assert name not in everything, f"{name} reached the annotator's browser"


def test_sign_out_and_in_resumes_at_the_right_question(live_server, page):
    password = make_annotator(live_server, "bruno")
    sign_in(page, live_server.url, "bruno", password)
    score_with_mouse(page, {"A": 3, "B": 3, "C": 4, "D": 2})
    page.get_by_role("link", name="Next question", exact=True).click()
    page.wait_for_url(re.compile(r"/annotate/\d+/q/\d+$"))
    unfinished = page.url
    score_with_mouse(page, {"C": 5})
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/login")

    sign_in(page, live_server.url, "bruno", password)
    assert page.url == unfinished
    expect(page.get_by_text("5 of 40")).to_be_visible()
    expect_scores(page, {"C": 5})
    page.locator("summary", has_text="Questions").click()
    menu = page.get_by_role("navigation", name="Questions")
    expect(menu.locator(".qlist-item.is-done")).to_have_count(1)
    expect(menu.locator(".qlist-item.is-partial")).to_have_count(1)
    screenshot(page, "scoring-resume-question-list")


def test_two_annotators_at_once_see_only_their_own_scores(live_server, browser):
    contexts = [browser.new_context(viewport={"width": 1280, "height": 800}) for _ in range(2)]
    try:
        pages = [context.new_page() for context in contexts]
        for page, name in zip(pages, ("carla", "dmitri")):
            sign_in(page, live_server.url, name, make_annotator(live_server, name))
        assert pages[0].url == pages[1].url
        page_one, page_two = pages
        score_with_mouse(page_one, {"A": 5, "B": 4})
        page_one.locator("#answer-A .comment-box summary").click()
        page_one.get_by_label("Comment on Answer A").fill("carla's private note")
        page_one.get_by_label("Comment on Answer A").press("Tab")
        score_with_mouse(page_two, {"A": 1})
        wait_saved(page_one)
        for page in pages:
            page.reload()
        expect_scores(page_one, {"A": 5, "B": 4})
        expect(page_one.get_by_text("2 of 40")).to_be_visible()
        expect_scores(page_two, {"A": 1})
        expect(page_two.get_by_text("1 of 40")).to_be_visible()
        expect(group(page_two, "B").get_by_role("radio", name="4", exact=True)).not_to_be_checked()
        assert "carla's private note" not in page_two.content()
        assert page_two.goto(live_server.url + "/studies/1").status == 403
        screenshot(page_one, "scoring-two-annotators-first")
    finally:
        for context in contexts:
            context.close()


def test_begin_again_archives_the_old_round(live_server, browser):
    annotator_context = browser.new_context(viewport={"width": 1280, "height": 800})
    admin_context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        annotator = annotator_context.new_page()
        sign_in(annotator, live_server.url, "erin", make_annotator(live_server, "erin"))
        score_with_mouse(annotator, {"A": 2, "B": 3, "C": 4, "D": 5})

        admin = admin_context.new_page()
        sign_in(admin, live_server.url, live_server.admin_user, live_server.admin_password)
        admin.get_by_role("link", name="Studies").click()
        admin.get_by_role("link", name="Demo", exact=True).click()
        expect(admin.get_by_role("heading", name="Progress", exact=True)).to_be_visible()
        row = admin.get_by_role("row", name=re.compile("erin"))
        expect(row).to_contain_text("4 of 40")
        row.get_by_role("link", name="Begin again for erin").click()
        expect(admin.get_by_role("heading", name="Begin again for erin in Demo?")).to_be_visible()
        screenshot(admin, "scoring-begin-again-confirm")
        admin.get_by_role("button", name="Yes, begin again").click()
        expect(admin.get_by_text("erin begins again in round 2. Round 1 is archived with 4 scores.")).to_be_visible()
        row = admin.get_by_role("row", name=re.compile("erin"))
        expect(row).to_contain_text("0 of 40")
        expect(row).to_contain_text("Round 1 · archived · 4 scores")
        screenshot(admin, "scoring-overview-after-begin-again")

        annotator.reload()
        expect(annotator.get_by_text("0 of 40")).to_be_visible()
        expect(annotator.locator(".score-radio:checked")).to_have_count(0)

        db = database(live_server)
        rounds = db.execute(
            "SELECT r.number, r.status, COUNT(s.id) FROM annotation_rounds r JOIN users u ON u.id = r.annotator_id "
            "LEFT JOIN scores s ON s.round_id = r.id WHERE u.username = 'erin' GROUP BY r.id ORDER BY r.number"
        ).fetchall()
        assert rounds == [(1, "archived", 4), (2, "open", 0)]
        exported = live_server.cli("export", "--format", "jsonl", "--out", "-")
        assert exported.returncode == 0 and not [
            line for line in exported.stdout.splitlines() if json.loads(line)["annotator"] == "erin"]
    finally:
        annotator_context.close()
        admin_context.close()


def test_scoring_everything_by_keyboard_reaches_the_finish_page(live_server, page):
    sign_in(page, live_server.url, "ines", make_annotator(live_server, "ines"))
    for number in range(1, 11):
        expect(page.get_by_text(f"Question {number} of 10")).to_be_visible()
        expect(page.locator("#answer-A")).to_be_focused()  # the page's keys are ready, on the first answer
        for key in ("4", "j", "4", "j", "2", "j", "5"):
            page.keyboard.press(key)
        wait_saved(page)
        page.get_by_role("link", name="Next question", exact=True).click()
        page.wait_for_load_state()
    expect(page.get_by_role("heading", name="All answers scored")).to_be_visible()
    expect(page.get_by_text("40 of 40")).to_be_visible()
    frequencies = page.get_by_role("table")
    for score, count in (("1 · Poor", "0"), ("2 · Weak", "10"), ("4 · Good", "20"), ("5 · Excellent", "10")):
        expect(frequencies.get_by_role("row", name=re.compile(score))).to_contain_text(count)
    screenshot(page, "scoring-finish-page")
    page.goto(live_server.url + "/")  # resuming with nothing left lands on the finish page
    expect(page.get_by_role("heading", name="All answers scored")).to_be_visible()


def test_a_failed_save_is_reported_and_retried(live_server, page):
    password = make_annotator(live_server, "fatima")
    sign_in(page, live_server.url, "fatima", password)
    failures = {"left": 1}

    def flaky(route):
        if failures["left"]:
            failures["left"] -= 1
            route.fulfill(status=503, content_type="text/plain", body="maintenance")
        else:
            route.continue_()

    page.route("**/annotate/api/score", flaky)
    group(page, "A").get_by_role("radio", name="4", exact=True).check()
    status = page.get_by_role("status")
    expect(status).to_contain_text("Could not save Answer A: the server answered 503")
    expect(status).to_contain_text("Retrying")
    expect(page.locator("#answer-A [data-state]")).to_have_text("Not saved yet")
    # The picture once the radio's colour transition has ended.
    page.evaluate("() => Promise.all(document.getAnimations().map((animation) => animation.finished))")
    screenshot(page, "scoring-save-failed")
    expect(status).to_have_text("Saved")
    page.reload()
    expect_scores(page, {"A": 4})


def test_find_in_document_counts_and_steps_through_matches(live_server, page):
    password = make_annotator(live_server, "gus")
    sign_in(page, live_server.url, "gus", password)
    expect(page.locator(".doc-seg").first).to_be_visible()
    page.get_by_role("searchbox", name="Find in document").fill("board")
    count = page.locator("#doc-find-count")
    expect(count).to_have_text(re.compile(r"^1 of \d+$"))
    total = int(count.inner_text().split(" of ")[1])
    assert total > 5
    page.get_by_role("button", name="Next match").click()
    expect(count).to_have_text(f"2 of {total}")
    page.get_by_role("button", name="Previous match").click()
    page.get_by_role("button", name="Previous match").click()
    expect(count).to_have_text(f"{total} of {total}")
    page.get_by_role("searchbox", name="Find in document").fill("no such phrase anywhere")
    expect(count).to_have_text("No matches")
    # A new search starts from the reading place (here near the end), not from the top.
    page.get_by_role("searchbox", name="Find in document").fill("Halloran")
    expect(count).to_have_text(re.compile(r"^\d+ of \d+$"))
    assert int(count.inner_text().split(" of ")[0]) > 1
    screenshot(page, "scoring-find-in-document")


def test_admin_creates_an_annotator_who_can_start_scoring(live_server, browser):
    admin_context = browser.new_context(viewport={"width": 1280, "height": 800})
    annotator_context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        admin = admin_context.new_page()
        sign_in(admin, live_server.url, live_server.admin_user, live_server.admin_password)
        admin.get_by_role("navigation", name="Main").get_by_role("link", name="Admin", exact=True).click()
        admin.get_by_label("Username").fill("hana")
        admin.get_by_label("Role").select_option("annotator")
        admin.get_by_role("button", name="Create account").click()
        expect(admin.get_by_role("heading", name="Account 'hana' created")).to_be_visible()
        password = admin.locator("#one-time-password").inner_text()
        screenshot(admin, "admin-password-once")
        admin.get_by_role("link", name="Done").click()
        # The list of accounts has loaded (a screenshot taken mid-navigation fails in Chromium).
        expect(admin.get_by_role("button", name="Deactivate hana")).to_be_visible()
        screenshot(admin, "admin-users")

        annotator = annotator_context.new_page()
        sign_in(annotator, live_server.url, "hana", password)
        assert QUESTION_URL.search(annotator.url)
        admin.get_by_role("button", name="Deactivate hana").click()
        expect(admin.get_by_text("'hana' is deactivated")).to_be_visible()
        annotator.reload()
        assert "/login" in annotator.url
    finally:
        admin_context.close()
        annotator_context.close()


def test_the_largest_leval_document_stays_smooth(live_server, page):
    require_shared()
    imported = live_server.cli("import-leval", str(HUMAN_EVAL))
    assert imported.returncode == 0, imported.stderr
    created = live_server.cli("study", "create", "L-Eval human evaluation", "--open")
    assert created.returncode == 0, created.stderr
    (study_id,) = database(live_server).execute("SELECT id FROM studies WHERE name = 'L-Eval human evaluation'").fetchone()
    question_id, chars = database(live_server).execute(
        "SELECT q.id, d.char_count FROM questions q JOIN documents d ON d.id = q.document_id "
        "WHERE d.collection = 'human_eval' ORDER BY d.char_count DESC, q.position LIMIT 1"
    ).fetchone()
    assert chars == 255_521
    sign_in(page, live_server.url, "annotator-big", make_annotator(live_server, "annotator-big"))

    started = time.perf_counter()
    page.goto(f"{live_server.url}/annotate/{study_id}/q/{question_id}")
    expect(page.locator("#doc-body")).to_have_attribute("aria-busy", "false")
    rendered = time.perf_counter() - started
    sizes = page.locator(".doc-seg").evaluate_all("nodes => nodes.map(n => n.textContent.length)")
    assert len(sizes) > 100 and max(sizes) <= 1600 and sum(sizes) > 250_000

    searched = time.perf_counter()
    page.get_by_role("searchbox", name="Find in document").fill("the")  # searches as you type
    expect(page.locator("#doc-find-count")).to_have_text(re.compile(r"^1 of \d{4,}$"))
    search_time = time.perf_counter() - searched
    page.locator("#doc-body").evaluate("body => body.scrollTop = body.scrollHeight")
    page.get_by_role("button", name="Next match").click()
    expect(page.locator("#doc-find-count")).to_have_text(re.compile(r"^\d+ of \d+$"))
    screenshot(page, "scoring-largest-document")
    print(f"255K document: page and panel ready in {rendered:.2f} s, 'the' found in {search_time:.2f} s")
    assert rendered < 5 and search_time < 3
