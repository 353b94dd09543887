"""Time per answer is active time: a hidden or unfocused page and idle gaps over the limit do not count."""
from __future__ import annotations

import pytest

from tests.e2e.conftest import sign_in, wait_until_true
from tests.e2e.test_scoring import database, make_annotator, wait_saved

pytestmark = pytest.mark.e2e

HIDE = """() => {
  Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true });
  document.hasFocus = () => false;
  window.dispatchEvent(new Event("blur"));
  document.dispatchEvent(new Event("visibilitychange"));
}"""
SHOW = """() => {
  delete document.visibilityState;
  delete document.hasFocus;
  document.dispatchEvent(new Event("visibilitychange"));
  window.dispatchEvent(new Event("focus"));
}"""


def seconds_by_label(server) -> dict[str, float]:
    rows = database(server).execute("SELECT answer_label, seconds_spent FROM scores").fetchall()
    return dict(rows)


def score_key(page, key: str) -> None:
    with page.expect_response(lambda r: r.url.endswith("/annotate/api/score") and r.ok):
        page.keyboard.press(key)
    wait_saved(page)


def test_hidden_blurred_and_idle_time_is_left_out(live_server, page):
    password = make_annotator(live_server, "tara")
    page.clock.install()
    sign_in(page, live_server.url, "tara", password)
    wait_until_true(page, "document.hasFocus() && typeof window.levalActiveSeconds === 'function'")
    # 40 s of reading with the mouse moving now and then: all of it counts.
    for _ in range(4):
        page.mouse.move(700, 400)
        page.clock.fast_forward(10_000)
        page.mouse.move(720, 420)
    # Ten minutes in another tab (hidden and blurred), then back: none of it counts.
    page.evaluate(HIDE)
    page.clock.fast_forward(600_000)
    page.evaluate(SHOW)
    page.keyboard.press("k")  # Answer A has the keys on arrival: k keeps them there
    score_key(page, "3")
    first = seconds_by_label(live_server)["A"]
    assert 38 <= first <= 45, first
    # Five minutes with the page open but untouched (over the two-minute limit): left out too.
    page.clock.fast_forward(300_000)
    page.keyboard.press("j")
    page.clock.fast_forward(20_000)
    score_key(page, "4")
    second = seconds_by_label(live_server)["B"]
    assert 58 <= second <= 68, second
    # Only blurred (another window in front, the page still visible): not counted either.
    page.evaluate("() => { document.hasFocus = () => false; window.dispatchEvent(new Event('blur')); }")
    page.clock.fast_forward(60_000)
    page.mouse.move(500, 500)  # moving over a page in a background window is not attention
    page.clock.fast_forward(60_000)
    page.evaluate("() => { delete document.hasFocus; window.dispatchEvent(new Event('focus')); }")
    page.keyboard.press("j")
    score_key(page, "5")
    third = seconds_by_label(live_server)["C"]
    assert second <= third <= second + 5, (second, third)
    # A reload keeps the question's total (this tab's session), and the wall clock is not used.
    page.reload()
    wait_until_true(page, "typeof window.levalActiveSeconds === 'function'")
    page.keyboard.press("j")
    page.clock.fast_forward(5_000)
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("j")
    score_key(page, "2")
    fourth = seconds_by_label(live_server)["D"]
    assert third + 4 <= fourth <= third + 10, (third, fourth)
