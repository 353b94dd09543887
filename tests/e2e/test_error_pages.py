"""Error pages as a person sees them: the layout, the menu, a heading and a way back; JSON on the API."""
from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, sign_in

pytestmark = pytest.mark.e2e


def test_a_missing_page_keeps_the_menu_and_offers_a_way_back(live_server, page):
    sign_in(page, live_server.url, live_server.admin_user, live_server.admin_password)
    response = page.goto(live_server.url + f"/jobs/{2 ** 63}")
    assert response.status == 404
    heading = page.get_by_role("heading", name="Page not found")
    assert heading.is_visible()
    menu = page.get_by_role("navigation", name="Main")
    assert menu.is_visible() and menu.get_by_role("link").count() >= 3
    back = page.get_by_role("link", name="Back to the overview")
    width = page.viewport_size["width"]
    box = back.bounding_box()
    assert box and 0 <= box["x"] and box["x"] + box["width"] <= width
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "error-404")
    back.click()
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()


def test_the_api_answers_json_and_a_signed_out_error_page_offers_sign_in(live_server, page):
    sign_in(page, live_server.url, live_server.admin_user, live_server.admin_password)
    response = page.goto(live_server.url + "/jobs/api/999999999")
    assert response.status == 404 and response.headers["content-type"].startswith("application/json")
    assert json.loads(page.inner_text("body"))["status"] == 404
    page.goto(live_server.url + "/login")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/login")
    response = page.goto(live_server.url + "/no/such/page")
    assert response.status == 404 and page.get_by_role("heading", name="Page not found").is_visible()
    assert page.get_by_role("link", name="Sign in").is_visible()
