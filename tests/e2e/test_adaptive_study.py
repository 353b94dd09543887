"""An adaptive study in a real browser: two annotators score what the server gives them until the study
settles on a planted ranking, and the study page shows the pairs settling."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, sign_in, start_server, stop_server
from tests.e2e.test_scoring import database, make_annotator, score_with_mouse
from tests.support.study_data import write_study_set

pytestmark = pytest.mark.e2e

# The planted ranking: study_data's systems in order, and the score each one's answers get.
PLANTED = {0: 5, 1: 4, 2: 2, 3: 1}
ANSWER_RE = re.compile(r"Roughly (\d+) visitors, the notes say \(\w+, day (\d+)\)")


@pytest.fixture
def adaptive_server(tmp_path):
    server = start_server(tmp_path / "instance", {"LEVAL_DEMO": "0", "LEVAL_WORKERS": "0"})
    data = write_study_set(tmp_path / "data", documents=4, questions_each=5)
    imported = server.cli("import-leval", str(data))
    assert imported.returncode == 0, imported.stderr
    yield server
    stop_server(server)


def _score_what_is_shown(page) -> int:
    """Score every answer on the page by the planted ranking (the test's oracle reads the system off the text)."""
    values = {}
    for answer in page.locator("article.answer").all():
        found = ANSWER_RE.search(answer.inner_text())
        number, day = int(found.group(1)), int(found.group(2))
        values[answer.get_attribute("data-label")] = PLANTED[number - day * 7]
    score_with_mouse(page, values)
    return len(values)


def _open_pairs(staff, url: str) -> int:
    staff.goto(url)
    return staff.locator('#ranking-pairs tr[data-state="open"]').count()


def test_two_annotators_settle_a_planted_ranking(adaptive_server, browser):
    server = adaptive_server
    created = server.cli("study", "create", "Active", "--allocation", "adaptive", "--budget-documents", "8",
                         "--tie-margin", "0.5", "--open")
    assert created.returncode == 0, created.stderr + created.stdout
    study = database(server).execute("SELECT id FROM studies WHERE name = 'Active'").fetchone()[0]
    study_url = f"{server.url}/studies/{study}"
    contexts = [browser.new_context() for _ in range(3)]
    annotators = []
    for name, context in zip(("lena", "omar"), contexts):
        page = context.new_page()
        sign_in(page, server.url, name, make_annotator(server, name))
        annotators.append(page)
    staff = contexts[2].new_page()
    sign_in(staff, server.url, server.admin_user, server.admin_password)
    open_counts = [_open_pairs(staff, study_url)]
    assert open_counts[0] == 3
    finished: set[int] = set()
    shown_sizes = []
    for _ in range(40):
        if len(finished) == 2:
            break
        for index, page in enumerate(annotators):
            if index in finished:
                continue
            page.goto(f"{server.url}/annotate/{study}/")
            if "/done" in page.url:
                expect(page.locator("#adaptive-why")).to_contain_text("settled")
                finished.add(index)
                continue
            shown_sizes.append(_score_what_is_shown(page))
        open_counts.append(_open_pairs(staff, study_url))
    assert finished == {0, 1}
    screenshot(staff, "adaptive-study-settled")
    # The page showed the pairs settling, and ends settled with the planted order.
    assert open_counts[-1] == 0 and max(open_counts) == 3
    expect(staff.locator('[data-field="settled"]')).to_have_text("settled")
    rows = staff.locator("#ranking-pairs tbody tr")
    assert [rows.nth(i).locator("td").first.inner_text() for i in range(3)] == ["north-1b", "east-2b", "south-3b"]
    expect(staff.locator("#budget-spent")).to_contain_text("of 8 documents read")
    # Never fewer than three answers on a page: the contended pair never stands alone.
    assert min(shown_sizes) >= 3
    read = database(server).execute(
        "SELECT COUNT(*) FROM (SELECT DISTINCT user_id, document_id FROM study_allocations) AS read_documents").fetchone()[0]
    assert read < 8  # settled before both annotators read every document
