"""Signing in and your account in Chromium (first-hour findings 6 and 7).

"Keep me signed in" survives a browser restart (the session cookies a restart drops are dropped here
too) and without it the restart signs out; an annotator part-way through one study lands on its work;
the chooser shows each study's progress with buttons apart; the account page changes the password and
signs out the other browsers; an admin's own row of the users page leads there.
"""
from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, sign_in, start_server, stop_server
from tests.e2e.test_scoring import score_with_mouse
from tests.support.live import ADMIN, SHARED_PASSWORD, instance_database_url
from tests.support.study_data import write_study_set

pytestmark = pytest.mark.e2e

STUDIES = ("Pilot", "Main run", "Extra")
ANNOTATORS = ("kit", "kim", "lou")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """No demo; a small data set (2 documents × 3 questions × 4 systems = 24 answers), three open studies, an
    admin and three annotators, all made in this process before the server starts (no command per row)."""
    folder = tmp_path_factory.mktemp("sign-in")
    instance = folder / "instance"
    url = instance_database_url(instance)  # pinned: the tests' own LEVAL_DATABASE_URL may name another database
    ids = prepare(instance, url, write_study_set(folder / "data", documents=2, questions_each=3))
    server = start_server(instance, {"LEVAL_DATABASE_URL": url, "LEVAL_DEMO": "0", "LEVAL_WORKERS": "0"})
    server.admin_user, server.admin_password = ADMIN, SHARED_PASSWORD
    server.study_ids = ids
    try:
        yield server
    finally:
        stop_server(server)


def prepare(instance, url: str, data) -> dict[str, int]:
    from flask_migrate import upgrade
    from sqlalchemy import insert

    from app import create_app
    from app.extensions import db
    from app.models import User
    from app.services.accounts import create_user
    from app.services.importers import import_path
    from app.services.studies.setup import StudySpec, create_study

    app = create_app({"INSTANCE_PATH": instance, "SQLALCHEMY_DATABASE_URI": url})
    with app.app_context():
        upgrade()
        assert not import_path(data).failed
        ids = {name: create_study(StudySpec(name=name, status="open")).id for name in STUDIES}
        template = create_user(ADMIN, SHARED_PASSWORD, "admin")
        db.session.execute(insert(User), [{"username": name, "password_hash": template.password_hash,
                                           "role": "annotator", "active": True} for name in ANNOTATORS])
        db.session.commit()
        db.session.remove()
        db.engine.dispose()
    return ids


def new_page(browser, width: int = 1280, height: int = 800):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    return context, page


def restart_browser(browser, context):
    """A new browser holding what a real one keeps over a restart: its persistent cookies, not its session ones."""
    kept = [cookie for cookie in context.cookies() if cookie["expires"] != -1]
    restarted, page = new_page(browser)
    if kept:
        restarted.add_cookies(kept)
    return restarted, page


def is_signed_in(page, base_url: str) -> bool:
    page.goto(base_url + "/")
    return "/login" not in page.url


def session_cookie(context) -> dict:
    return next(cookie for cookie in context.cookies() if cookie["name"] == "session")


def test_keep_me_signed_in_survives_a_browser_restart_and_without_it_a_restart_signs_out(server, browser):
    password = SHARED_PASSWORD
    context, page = new_page(browser)
    page.goto(server.url + "/login")
    box = page.get_by_label("Keep me signed in")
    expect(box).to_be_visible()
    expect(box).not_to_be_checked()
    expect(page.get_by_text("For 14 days, even after the browser closes")).to_be_visible()
    # In the form's order: username, password, the box, the button; a click on its words ticks it.
    page.get_by_label("Username").focus()
    order = []
    for _ in range(3):
        page.keyboard.press("Tab")
        order.append(page.evaluate("document.activeElement.id || document.activeElement.textContent.trim()"))
    assert order == ["password", "keep", "Sign in"], order
    page.get_by_text("Keep me signed in", exact=True).click()
    expect(box).to_be_checked()
    card, label = page.locator(".login-card").bounding_box(), page.locator("label[for=keep]").bounding_box()
    assert card["x"] <= label["x"] and label["x"] + label["width"] <= card["x"] + card["width"]
    screenshot(page, "sign-in-keep-me-signed-in")
    page.get_by_label("Username").fill("kit")
    page.get_by_label("Password").fill(password)
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()
    expires = session_cookie(context)["expires"]
    assert 14 * 86400 - 120 < expires - time.time() <= 14 * 86400 + 2, expires - time.time()  # whole seconds
    _, after_restart = restart_browser(browser, context)
    assert is_signed_in(after_restart, server.url), "a kept sign-in must survive closing the browser"

    plain, page = new_page(browser)
    sign_in(page, server.url, "kit", password)
    assert is_signed_in(page, server.url)
    assert session_cookie(plain)["expires"] == -1
    _, after_restart = restart_browser(browser, plain)
    assert not is_signed_in(after_restart, server.url), "without the box, closing the browser signs out"


def test_the_chooser_shows_progress_with_spaced_buttons_and_sign_in_lands_on_the_work_in_progress(server, browser):
    password = SHARED_PASSWORD
    context, page = new_page(browser)
    sign_in(page, server.url, "kim", password)
    expect(page.get_by_role("heading", name="Your studies")).to_be_visible()
    rows = page.locator("li.study-choice")
    expect(rows).to_have_count(3)
    for name in STUDIES:
        row = rows.filter(has_text=name)
        expect(row).to_contain_text("0 of 24 scored · Start")
        expect(row.get_by_role("link", name=f"Start {name}")).to_be_visible()
    check_spacing(page)
    screenshot(page, "chooser-before")

    page.get_by_role("link", name="Start Main run").click()
    page.wait_for_url(re.compile(rf"/annotate/{server.study_ids['Main run']}/q/\d+$"))
    score_with_mouse(page, {"A": 4, "B": 2})
    worked_on = page.url
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/login")
    sign_in(page, server.url, "kim", password)
    assert page.url == worked_on, "one study in progress: sign-in lands on its work"
    expect(page.get_by_text("2 of 24")).to_be_visible()

    page.get_by_role("link", name="Annotate", exact=True).click()
    expect(page.get_by_role("heading", name="Your studies")).to_be_visible()
    expect(rows.filter(has_text="Main run")).to_contain_text("2 of 24 scored · Continue")
    expect(rows.filter(has_text="Pilot")).to_contain_text("0 of 24 scored · Start")
    check_spacing(page)
    screenshot(page, "chooser-progress")

    context, narrow = new_page(browser, 1024, 768)
    sign_in(narrow, server.url, "kim", password)
    narrow.goto(server.url + "/annotate/")
    check_spacing(narrow)


def check_spacing(page) -> None:
    """Each row's button sits beside its progress, apart from it; rows (and so their buttons) stand apart."""
    boxes = page.evaluate("""() => [...document.querySelectorAll('li.study-choice')].map(li => {
        const box = e => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; };
        return {row: box(li), button: box(li.querySelector('a.button')),
                progress: box(li.querySelector('.study-choice-progress'))};
    })""")
    assert len(boxes) == 3
    for before, after in zip(boxes, boxes[1:]):
        assert after["row"]["y"] - (before["row"]["y"] + before["row"]["h"]) >= 8, (before, after)
        assert after["button"]["y"] - (before["button"]["y"] + before["button"]["h"]) >= 16, (before, after)
    for box in boxes:
        button, progress, row = box["button"], box["progress"], box["row"]
        assert button["x"] - (progress["x"] + progress["w"]) >= 12, box  # the "·" and gaps between them
        assert abs((button["y"] + button["h"] / 2) - (progress["y"] + progress["h"] / 2)) < 4, box
        assert button["x"] + button["w"] <= row["x"] + row["w"] and button["h"] >= 28, box


def test_the_account_page_changes_the_password_and_signs_out_the_other_browsers(server, browser):
    password = SHARED_PASSWORD
    _, page = new_page(browser)
    _, elsewhere = new_page(browser)
    sign_in(page, server.url, "lou", password)
    sign_in(elsewhere, server.url, "lou", password)
    page.get_by_role("link", name=re.compile(r"^lou")).click()
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()
    assert page.url == server.url + "/account/"
    expect(page.get_by_role("link", name=re.compile(r"^lou"))).to_have_attribute("aria-current", "page")

    page.get_by_label("Current password").fill("not-my-password")
    page.get_by_label("New password", exact=True).fill("lou-second-pass-2")
    page.get_by_label("New password again").fill("lou-second-pass-2")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("alert")).to_have_text("Your current password is not right; nothing was changed.")
    assert is_signed_in(elsewhere, server.url)

    # Ending the API tokens is offered ticked, with what it does, between the passwords and the button.
    end_tokens = page.get_by_label("Also end my API tokens")
    expect(end_tokens).to_be_checked()
    expect(end_tokens).to_have_accessible_description(re.compile(r"no active API token now\. Leave this ticked if "
                                                                 r"someone else may know your password"))
    boxes = [page.get_by_label(name, exact=True).bounding_box() for name in ("New password again",
                                                                             "Also end my API tokens")]
    button = page.get_by_role("button", name="Change password").bounding_box()
    assert boxes[0]["y"] < boxes[1]["y"] < button["y"], (boxes, button)
    page.get_by_label("Current password").fill(password)
    page.get_by_label("New password", exact=True).fill("lou-second-pass-2")
    page.get_by_label("New password again").fill("lou-second-pass-2")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    screenshot(page, "account-password-changed")
    assert is_signed_in(page, server.url), "this browser stays signed in"
    assert not is_signed_in(elsewhere, server.url), "the other browser is signed out"
    sign_in(elsewhere, server.url, "lou", password)
    expect(elsewhere.get_by_text("Wrong username or password")).to_be_visible()
    sign_in(elsewhere, server.url, "lou", "lou-second-pass-2")
    assert is_signed_in(elsewhere, server.url)

    page.goto(server.url + "/account/")
    page.get_by_role("button", name="Sign out everywhere else").click()
    expect(page.get_by_role("status")).to_contain_text("Every other browser signed in as you is signed out")
    assert is_signed_in(page, server.url) and not is_signed_in(elsewhere, server.url)


def test_an_admins_own_row_leads_to_the_account_page_and_keeps_the_admin_signed_in(server, page):
    sign_in(page, server.url, server.admin_user, server.admin_password)
    page.goto(server.url + "/admin/users")
    own = page.locator("tr", has=page.get_by_role("rowheader", name=re.compile(rf"^{server.admin_user} \(you\)")))
    expect(own.get_by_role("button", name=re.compile("Reset password"))).to_have_count(0)
    expect(page.get_by_role("button", name="Reset password for kim")).to_be_visible()
    own.get_by_role("link", name="Change your password").click()
    page.wait_for_url("**/account/#password")
    expect(page.get_by_role("heading", name="Change your password")).to_be_in_viewport()
    assert is_signed_in(page, server.url)
