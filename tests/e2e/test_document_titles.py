"""Documents are named by their own title line or their task and number, and the question list
tells a document's questions apart (L-Eval's eight financial questions share one preamble)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, sign_in
from tests.e2e.test_scoring import database, make_annotator
from tests.support.shared import HUMAN_EVAL, require_shared

pytestmark = pytest.mark.e2e

PREAMBLE = "You are asked to act as a member of the Financial Results Conference Call"


def test_titles_and_the_question_list_on_leval_subset(live_server, browser):
    require_shared()
    assert live_server.cli("import-leval", str(HUMAN_EVAL)).returncode == 0
    assert live_server.cli("study", "create", "L-Eval subset", "--open").returncode == 0
    db = database(live_server)
    (study_id,) = db.execute("SELECT id FROM studies WHERE name = 'L-Eval subset'").fetchone()
    titles = [t for (t,) in db.execute("SELECT title FROM documents WHERE collection = 'human_eval' ORDER BY id")]
    assert not [t for t in titles if t.startswith(("Grad ", "Produced by", "Professor ", "Review #"))], titles
    (question_id,) = db.execute(
        "SELECT q.id FROM questions q JOIN documents d ON d.id = q.document_id "
        "WHERE d.collection = 'human_eval' AND d.task = 'financial' ORDER BY q.position LIMIT 1").fetchone()
    password = make_annotator(live_server, "fin")
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    sign_in(page, live_server.url, "fin", password)
    page.goto(f"{live_server.url}/annotate/{study_id}/q/{question_id}")
    heading = page.locator("#doc-title")
    expect(heading).to_have_text("Renewable Energy Group Second Quarter 2019 Earnings Conference Call")
    page.get_by_text("Questions", exact=True).click()
    group = page.locator(".qlist-doc").filter(has=page.get_by_role("heading", name="Renewable Energy Group"))
    expect(group).to_be_visible()
    items = group.locator(".qlist-text")
    expect(items).to_have_count(8)
    texts = items.all_inner_texts()
    assert len(set(texts)) == 8, texts
    assert not any(text.startswith(PREAMBLE) for text in texts), texts
    assert texts[1].startswith("What are Renewable Energy Group's plans")
    # Each is readable, not cut to nothing: the visible text of each item shows its own words.
    widths = items.evaluate_all("nodes => nodes.map(n => n.getBoundingClientRect().width)")
    assert min(widths) > 150, widths
    # Meetings without a title line are named by task and number, told apart from each other.
    meetings = page.locator(".qlist-title-text").filter(has_text="meeting_summ · document")
    expect(meetings).to_have_count(2)
    screenshot(page, "question-list-financial")
    context.close()
