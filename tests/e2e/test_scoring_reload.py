"""A save the server refuses with `reload: true` is not retried: the page keeps the choice and offers a reload."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, sign_in, wait_until
from tests.e2e.test_scoring import group, make_annotator, score_with_mouse

pytestmark = pytest.mark.e2e

SAVE_PATH = "/annotate/api/score"
FIRST_BACKOFF_MS = 2_000  # annotate.js retries a failed save after 2 s, then 4 s, …


def count_saves(page) -> list[str]:
    """Record every score save the page sends from now on."""
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.method) if request.url.endswith(SAVE_PATH) else None)
    return sent


def expect_reload_offered_and_no_retry(page, sent: list[str], message: str) -> None:
    status = page.get_by_role("status")
    expect(status).to_contain_text("Answer A was not saved.")
    expect(status).to_contain_text(message)
    expect(status).to_contain_text("Your unsaved choices stay visible until then.")
    expect(status.get_by_role("button", name="Reload the page")).to_be_visible()
    expect(group(page, "A").get_by_role("radio", name="4", exact=True)).to_be_checked()
    expect(page.locator("#answer-A [data-state]")).to_have_text("Not saved yet")
    # Another choice is kept on screen too, and sends nothing.
    group(page, "B").get_by_role("radio", name="2", exact=True).check()
    expect(page.locator("#answer-B [data-state]")).to_have_text("Not saved yet")
    # Past the first retry, had there been one: the page's timers run at once. A request the page sends after
    # them reaches the test after any save they sent.
    page.clock.run_for(FIRST_BACKOFF_MS * 2)
    seen = []
    page.on("request", lambda request: seen.append(request) if request.url.endswith("/healthz") else None)
    page.evaluate("() => { fetch('/healthz'); }")
    wait_until(page, lambda: seen, "the page's request for /healthz")
    assert sent == ["POST"], f"{len(sent)} saves were sent; only the refused one should be"
    expect(status).to_contain_text("Answer A was not saved.")  # the message stays; no "Saving…" or "Retrying"
    expect(group(page, "B").get_by_role("radio", name="2", exact=True)).to_be_checked()


def test_a_round_begun_again_elsewhere_stops_saving_and_offers_a_reload(live_server, browser):
    annotator_context = browser.new_context(viewport={"width": 1280, "height": 800})
    admin_context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        annotator = annotator_context.new_page()
        annotator.clock.install()  # time runs as usual until the test moves it on past a retry
        sign_in(annotator, live_server.url, "jonas", make_annotator(live_server, "jonas"))
        question_url = annotator.url
        score_with_mouse(annotator, {"C": 5})

        admin = admin_context.new_page()
        sign_in(admin, live_server.url, live_server.admin_user, live_server.admin_password)
        admin.goto(live_server.url + "/studies/1")  # the demo study, the only one
        admin.get_by_role("row", name=re.compile("jonas")).get_by_role("link", name="Begin again for jonas").click()
        admin.get_by_role("button", name="Yes, begin again").click()
        expect(admin.get_by_text("jonas begins again in round 2.")).to_be_visible()

        sent = count_saves(annotator)
        with annotator.expect_response(lambda r: r.url.endswith(SAVE_PATH)) as refused:
            group(annotator, "A").get_by_role("radio", name="4", exact=True).check()
        assert refused.value.status == 409 and refused.value.json()["reload"] is True
        expect_reload_offered_and_no_retry(annotator, sent, "Your scoring round has changed (you were started over).")
        screenshot(annotator, "scoring-reload-needed")

        with annotator.expect_navigation():
            annotator.get_by_role("status").get_by_role("button", name="Reload the page").click()
        assert annotator.url == question_url
        expect(annotator.get_by_role("status")).to_have_text("")
        expect(annotator.get_by_text("0 of 40")).to_be_visible()
        expect(annotator.locator(".score-radio:checked")).to_have_count(0)
        score_with_mouse(annotator, {"A": 4})  # the reloaded page saves into the new round
        expect(annotator.get_by_text("1 of 40")).to_be_visible()
        assert sent.count("POST") == 2
    finally:
        annotator_context.close()
        admin_context.close()


def test_a_stale_security_token_stops_saving_and_the_reload_leads_to_sign_in(live_server, page):
    page.clock.install()  # time runs as usual until the test moves it on past a retry
    sign_in(page, live_server.url, "kirsi", make_annotator(live_server, "kirsi"))
    page.context.clear_cookies()  # the session that issued the page's token is gone
    sent = count_saves(page)
    with page.expect_response(lambda r: r.url.endswith(SAVE_PATH)) as refused:
        group(page, "A").get_by_role("radio", name="4", exact=True).check()
    assert refused.value.status == 400 and refused.value.json()["reload"] is True
    expect_reload_offered_and_no_retry(page, sent, "The page's security token is missing or stale.")

    with page.expect_navigation():
        page.get_by_role("button", name="Reload the page").click()
    page.wait_for_url("**/login**")
    expect(page.get_by_label("Username")).to_be_visible()
