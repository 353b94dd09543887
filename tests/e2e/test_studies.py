"""Studies in a real browser: two studies side by side, a replaced answer, hidden references, overlap 2 of 3 (shared by document),
resuming at the question last worked on, and a draft comment that survives a reload and a sign-out."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, sign_in, start_server, stop_server
from tests.e2e.test_scoring import database, expect_scores, group, make_annotator, score_with_mouse, wait_saved
from tests.support.study_data import replace_answer, write_study_set

pytestmark = pytest.mark.e2e


@pytest.fixture
def study_server(tmp_path):
    """A server started empty (--no-demo semantics through LEVAL_DEMO=0) with one data set imported."""
    server = start_server(tmp_path / "instance", {"LEVAL_DEMO": "0", "LEVAL_WORKERS": "0"})
    server.data = write_study_set(tmp_path / "data", documents=2, questions_each=3, copies_gpt4="east-2b")
    imported = server.cli("import-leval", str(server.data))
    assert imported.returncode == 0, imported.stderr
    yield server
    stop_server(server)


def create(server, *args: str) -> int:
    result = server.cli("study", "create", *args)
    assert result.returncode == 0, result.stderr + result.stdout
    name = args[0]
    return database(server).execute("SELECT id FROM studies WHERE name = ?", (name,)).fetchone()[0]


def test_two_studies_on_the_same_systems_are_scored_apart(study_server, page):
    server = study_server
    first = create(server, "Pilot", "--open")
    second = create(server, "Main run", "--open")
    password = make_annotator(server, "lena")
    sign_in(page, server.url, "lena", password)
    expect(page.get_by_role("heading", name="Your studies")).to_be_visible()
    page.get_by_role("link", name="Pilot").click()
    page.wait_for_url(re.compile(rf"/annotate/{first}/q/\d+$"))
    score_with_mouse(page, {"A": 4, "B": 2})
    expect(page.get_by_text("2 of 24")).to_be_visible()
    screenshot(page, "studies-pilot-scored")

    page.goto(server.url + "/annotate/")
    page.get_by_role("link", name="Main run").click()
    page.wait_for_url(re.compile(rf"/annotate/{second}/q/\d+$"))
    expect(page.get_by_text("0 of 24")).to_be_visible()
    expect(page.locator(".score-radio:checked")).to_have_count(0)
    rows = database(server).execute(
        "SELECT r.study_id, COUNT(s.id) FROM annotation_rounds r LEFT JOIN scores s ON s.round_id = r.id "
        "GROUP BY r.study_id ORDER BY r.study_id").fetchall()
    assert rows == [(first, 2), (second, 0)]


def test_a_replaced_answer_keeps_its_score_until_the_study_is_moved_on(study_server, browser):
    server = study_server
    study = create(server, "Visitors", "--open")
    annotator_context, staff_context = browser.new_context(), browser.new_context()
    try:
        annotator = annotator_context.new_page()
        sign_in(annotator, server.url, "mo", make_annotator(server, "mo"))
        answer = annotator.locator("article.answer").filter(has_text="Roughly 9 visitors")
        label = answer.get_attribute("data-label")
        score_with_mouse(annotator, {label: 3})

        replaced = server.cli("import-leval", str(replace_answer(server.data, "south-3b", 0, "Nobody came, says south.")),
                              "--replace")
        assert replaced.returncode == 0, replaced.stderr
        annotator.reload()
        expect(answer).to_contain_text("Roughly 9 visitors")
        expect(answer.locator("[data-state]")).to_have_text("Scored 3")
        expect(annotator.get_by_text("Nobody came, says south.")).to_have_count(0)

        staff = staff_context.new_page()
        sign_in(staff, server.url, server.admin_user, server.admin_password)
        staff.goto(f"{server.url}/studies/{study}")
        notice = staff.get_by_role("note")
        expect(notice).to_contain_text("south-3b: 1 answer(s) have a newer text; moving to it makes 1 score(s) stale")
        notice.get_by_role("link", name="Move to the newest answers…").click()
        expect(staff.locator('[data-field="stale"]')).to_have_text("1")
        screenshot(staff, "studies-pin-confirm")
        staff.get_by_role("button", name="Yes, move to the newest answers").click()
        expect(staff.get_by_text("1 score(s) become stale")).to_be_visible()

        annotator.reload()
        expect(annotator.get_by_text("Nobody came, says south.")).to_be_visible()
        expect(annotator.get_by_text("Roughly 9 visitors")).to_have_count(0)
        expect(annotator.get_by_text("0 of 24")).to_be_visible()

        staff.goto(f"{server.url}/results?study={study}")
        expect(staff.get_by_text("No scores yet")).to_be_visible()
        staff.get_by_role("link", name="included").click()
        expect(staff.locator(".scope")).to_contain_text("including 1 stale score")
    finally:
        annotator_context.close()
        staff_context.close()


def test_a_reference_that_repeats_an_answer_is_hidden(study_server, page):
    server = study_server
    study = create(server, "Visitors", "--open")
    sign_in(page, server.url, "nia", make_annotator(server, "nia"))
    references = page.get_by_role("region", name="References")
    expect(references.get_by_role("heading", name="Human reference")).to_be_visible()
    expect(references.get_by_role("heading", name="Claude-100k reference")).to_be_visible()
    expect(references.get_by_role("heading", name="GPT-4-32k reference")).to_have_count(0)
    note = page.locator('[data-field="hidden-references"]')
    expect(note).to_be_visible()
    expect(note).to_have_text(re.compile("1 reference hidden on this question"))
    box = note.bounding_box()
    assert box and box["height"] > 0 and box["width"] > 100
    screenshot(page, "studies-hidden-reference")
    result = server.cli("study", "show", "Visitors", "--json")
    assert '"GPT-4-32k reference: identical": 6' in result.stdout


def test_overlap_two_of_three_shares_the_documents(study_server, browser):
    """Overlap 2 gives each document, with all its questions, to 2 of the 3 annotators: each reads whole
    documents, and every question is scored by exactly 2 (2 documents of 3 questions: 12 question-readings)."""
    server = study_server
    passwords = {name: make_annotator(server, name) for name in ("oli", "pia", "quin")}
    study = create(server, "Shared", "--overlap", "2", "--annotators", "oli,pia,quin", "--open")
    seen = {}
    for name, password in passwords.items():
        context = browser.new_context()
        try:
            page = context.new_page()
            sign_in(page, server.url, name, password)
            expect(page.get_by_text(re.compile(r"^Question 1 of [36]$"))).to_be_visible()
            page.locator("summary", has_text="Questions").click()
            seen[name] = page.get_by_role("navigation", name="Questions").locator(".qlist-item").count()
        finally:
            context.close()
    assert sorted(seen.values()) == [3, 3, 6] and sum(seen.values()) == 12
    rows = database(server).execute(
        "SELECT u.username, q.document_id, a.question_id FROM study_assignments a"
        " JOIN users u ON u.id = a.user_id JOIN questions q ON q.id = a.question_id"
        " WHERE a.study_id = ?", (study,)).fetchall()
    per_question: dict[int, int] = {}
    per_reading: dict[tuple[str, int], int] = {}
    for username, document, question in rows:
        per_question[question] = per_question.get(question, 0) + 1
        per_reading[(username, document)] = per_reading.get((username, document), 0) + 1
    assert len(per_question) == 6 and set(per_question.values()) == {2}
    assert len(per_reading) == 4 and set(per_reading.values()) == {3}, "each reader gets a whole document"
    assert {name: sum(n for (who, _), n in per_reading.items() if who == name) for name in seen} == seen


def test_signing_in_again_resumes_at_the_question_last_worked_on(study_server, page):
    server = study_server
    create(server, "Visitors", "--open")
    password = make_annotator(server, "rae")
    sign_in(page, server.url, "rae", password)
    page.locator("summary", has_text="Questions").click()
    page.get_by_role("navigation", name="Questions").locator("a.qlist-item").nth(4).click()
    page.wait_for_url(re.compile(r"/q/\d+$"))
    fifth = page.url
    score_with_mouse(page, {"B": 5})
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/login")
    sign_in(page, server.url, "rae", password)
    assert page.url == fifth, "the first unscored question is question 1, but work stopped on question 5"
    expect_scores(page, {"B": 5})


def test_a_draft_comment_survives_a_reload_and_a_sign_out(study_server, page):
    server = study_server
    create(server, "Visitors", "--open")
    password = make_annotator(server, "sol")
    sign_in(page, server.url, "sol", password)
    page.locator("#answer-A .comment-box summary").click()
    page.get_by_label("Comment on Answer A").fill("half a thought about A")
    page.reload()
    expect(page.get_by_label("Comment on Answer A")).to_have_value("half a thought about A")
    expect(page.get_by_label("Comment on Answer A")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("Answer A")

    page.get_by_role("button", name="Sign out").click()
    page.on("dialog", lambda dialog: dialog.accept())
    page.wait_for_url("**/login")
    sign_in(page, server.url, "sol", password)
    expect(page.get_by_label("Comment on Answer A")).to_have_value("half a thought about A")
    with page.expect_response(lambda r: r.url.endswith("/annotate/api/score") and r.ok):
        group(page, "A").get_by_role("radio", name="2", exact=True).check()
    wait_saved(page)
    stored = database(server).execute("SELECT value, comment FROM scores").fetchall()
    assert stored == [(2, "half a thought about A")]
    page.reload()
    expect(page.get_by_label("Comment on Answer A")).to_have_value("half a thought about A")
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('leval-draft:')).length") == 0
