"""Taking a mis-keyed score back in a browser: Backspace, Delete and 0 clear the focused answer, each
answer has a Clear button, Ctrl+Z undoes the last change; what is cleared reads "Not scored" again,
the progress drops, and a reload shows what the server kept."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import sign_in
from tests.e2e.test_scoring import database, group, make_annotator, score_with_mouse, wait_saved

pytestmark = pytest.mark.e2e


def state(page, label: str):
    return page.locator(f"#answer-{label} [data-state]")


def saved_after(page, action) -> None:
    with page.expect_response(lambda r: r.url.endswith("/annotate/api/score") and r.ok):
        action()
    wait_saved(page)


def test_clear_keys_button_and_undo_take_a_score_back(live_server, page):
    sign_in(page, live_server.url, "nora", make_annotator(live_server, "nora"))
    page.wait_for_load_state()
    expect(page.locator("#answer-A [data-clear]")).to_be_hidden()  # nothing to clear yet
    score_with_mouse(page, {"A": 3, "B": 4, "C": 5})
    expect(page.locator("#progress-count")).to_have_text("3 of 40")
    expect(page.locator("#answer-A [data-clear]")).to_be_visible()

    page.locator('.jump[data-jump="B"]').click()  # the answers' index focuses Answer B
    expect(page.locator("#answer-B")).to_be_focused()
    saved_after(page, lambda: page.keyboard.press("Backspace"))
    expect(state(page, "B")).to_have_text("Not scored")
    expect(group(page, "B").locator(".score-radio:checked")).to_have_count(0)
    expect(page.locator("#progress-count")).to_have_text("2 of 40")
    expect(page.locator('.jump[data-jump="B"]')).to_have_attribute("aria-label", "Answer B, not scored")

    page.keyboard.press("j")  # Answer C
    saved_after(page, lambda: page.keyboard.press("Delete"))
    expect(state(page, "C")).to_have_text("Not scored")
    saved_after(page, lambda: page.get_by_role("button", name="Clear the score of Answer A").click())
    expect(state(page, "A")).to_have_text("Not scored")
    expect(page.locator("#progress-count")).to_have_text("0 of 40")
    page.keyboard.press("0")  # A is focused and has nothing to clear: no save (the trail below), no change
    expect(page.get_by_role("status")).to_have_text("Saved")  # a save would say "Saving…" as the key is handled
    expect(page.locator("#progress-count")).to_have_text("0 of 40")

    saved_after(page, lambda: page.keyboard.press("Control+z"))  # the Clear button on A
    expect(state(page, "A")).to_have_text("Scored 3")
    expect(group(page, "A").get_by_role("radio", name="3", exact=True)).to_be_checked()
    saved_after(page, lambda: page.keyboard.press("Control+z"))  # Delete on C
    expect(state(page, "C")).to_have_text("Scored 5")
    expect(page.locator("#progress-count")).to_have_text("2 of 40")

    page.keyboard.press("k")
    page.keyboard.press("k")  # back on Answer A
    expect(page.locator("#answer-A")).to_be_focused()
    saved_after(page, lambda: page.keyboard.press("0"))
    expect(page.locator("#progress-count")).to_have_text("1 of 40")

    page.reload()
    expect(state(page, "A")).to_have_text("Not scored")
    expect(state(page, "B")).to_have_text("Not scored")
    expect(state(page, "C")).to_have_text("Scored 5")
    expect(page.locator(".score-radio:checked")).to_have_count(1)
    expect(page.locator("#progress-count")).to_have_text("1 of 40")
    with database(live_server) as db:
        trail = db.execute("SELECT s.answer_label, r.old_value, r.new_value FROM score_revisions r "
                           "JOIN scores s ON s.id = r.score_id ORDER BY r.id").fetchall()
    assert [tuple(row) for row in trail] == [
        ("A", None, 3), ("B", None, 4), ("C", None, 5), ("B", 4, None), ("C", 5, None), ("A", 3, None),
        ("A", None, 3), ("C", None, 5), ("A", 3, None)]


def test_ctrl_z_in_a_comment_box_is_the_boxs_own_undo(live_server, page):
    sign_in(page, live_server.url, "olga", make_annotator(live_server, "olga"))
    page.wait_for_load_state()
    score_with_mouse(page, {"A": 2})
    page.locator("#answer-A .comment-box summary").click()
    box = page.get_by_label("Comment on Answer A")
    box.fill("x")
    box.press("Control+z")
    expect(box).to_have_value("")  # the box took the key back
    # The page's undo would have unchecked the radio as the key was handled; the score stays.
    expect(group(page, "A").get_by_role("radio", name="2", exact=True)).to_be_checked()
    expect(state(page, "A")).to_have_text("Scored 2")
