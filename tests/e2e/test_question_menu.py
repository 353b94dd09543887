"""The Questions menu follows the page's saves: a question scored through is marked done, and its
document's "n of m done" count moves, without a reload."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import sign_in
from tests.e2e.test_scoring import QUESTION_URL, make_annotator, score_with_mouse

pytestmark = pytest.mark.e2e


def test_scoring_every_answer_updates_the_menu_count_without_a_reload(live_server, page):
    sign_in(page, live_server.url, "mia", make_annotator(live_server, "mia"))
    question_id = QUESTION_URL.search(page.url).group(1)
    page.wait_for_load_state()
    page.evaluate("window.__sameDocument = true")  # gone if the page reloads
    menu = page.locator("#qlist-menu")
    menu.locator("summary").click()
    selector = f'.qlist-item[data-question="{question_id}"]'
    item = menu.locator(selector)
    section = menu.locator(".qlist-doc").filter(has=page.locator(selector))
    count = section.locator(".qlist-count")
    expect(item.locator(".qlist-state")).to_have_text("not started")
    match = re.fullmatch(r"0 of (\d+) done", count.inner_text())
    assert match, count.inner_text()
    of = match.group(1)

    page.keyboard.press("Escape")
    score_with_mouse(page, {"A": 3, "B": 4})
    menu.locator("summary").click()
    expect(item.locator(".qlist-state")).to_have_text("2 of 4")
    expect(count).to_have_text(f"0 of {of} done")
    page.keyboard.press("Escape")

    score_with_mouse(page, {"C": 2, "D": 5})
    menu.locator("summary").click()
    expect(item.locator(".qlist-state")).to_have_text("done")
    expect(item.locator(".qlist-mark")).to_have_text("✓")
    expect(count).to_have_text(f"1 of {of} done")
    expect(count).to_be_visible()
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
