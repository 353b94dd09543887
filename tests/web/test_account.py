"""Your account (first-hour finding 7): change your own password, sign out everywhere else; an admin's own row.

Before, nobody could change their own password, and "Reset password" on an admin's own row of the
users page ended the admin's session and showed a password nobody asked for.
"""
from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import User
from tests.conftest import PASSWORDS, AuthActions, csrf_token

NEW = "a-fresh-pass-4567"


def signed_in(app, username: str):
    client = app.test_client()
    assert AuthActions(client).login(username).status_code == 302
    return client


def signed_out(client) -> bool:
    response = client.get("/")
    return response.status_code == 302 and "/login" in response.headers["Location"]


def copy_of(app, client):
    """Another browser holding a copy of client's session cookie."""
    thief = app.test_client()
    cookie = client.get_cookie("session")
    thief.set_cookie(cookie.key, cookie.value)
    assert not signed_out(thief)
    return thief


def change(client, current: str, new: str = NEW, again: str | None = None, *, token: str | None = None):
    return client.post("/account/password", data={
        "current_password": current, "new_password": new, "new_password_again": new if again is None else again,
        "csrf_token": csrf_token(client) if token is None else token})


def password_hash(app, username: str) -> str:
    with app.app_context():
        return db.session.scalar(select(User.password_hash).where(User.username == username))


@pytest.mark.parametrize("username", ["admin", "researcher", "annotator"])
def test_every_signed_in_user_reaches_their_account_page_from_the_top_bar(app, username):
    client = signed_in(app, username)
    home = client.get("/", follow_redirects=True).get_data(as_text=True)
    assert re.search(r'<a class="who" href="/account/"[^>]*>' + username, home)
    page = client.get("/account/").get_data(as_text=True)
    assert "<h1>Your account</h1>" in page and f"<strong>{username}</strong>" in page
    assert '<h2 id="password-heading">Change your password</h2>' in page
    assert ">Sign out everywhere else</button>" in page


def test_changing_the_password_keeps_this_browser_and_ends_the_others(app):
    client = signed_in(app, "annotator")
    other, thief = signed_in(app, "annotator"), copy_of(app, client)
    response = change(client, PASSWORDS["annotator"])
    assert response.status_code == 302 and response.headers["Location"] == "/account/"
    assert "Your password is changed" in client.get("/account/").get_data(as_text=True)
    assert not signed_out(client), "the browser that changed it stays signed in"
    assert signed_out(other) and signed_out(thief), "every other session ends"
    fresh = app.test_client()
    assert AuthActions(fresh).login("annotator").status_code == 401, "the old password no longer works"
    assert AuthActions(fresh).login("annotator", NEW).status_code == 302


@pytest.mark.parametrize("current, new, again, message", [
    ("not-my-password", NEW, None, "Your current password is not right"),
    (None, NEW, "a-different-pass-9", "The two new passwords differ"),
    (None, "short", None, "at least 8 characters"),
    (None, PASSWORDS["researcher"], None, "The new password is the one you have now"),
    ("", NEW, None, "Type your current password."),
])
def test_a_refused_change_says_why_and_changes_nothing(app, current, new, again, message):
    client = signed_in(app, "researcher")
    other = signed_in(app, "researcher")
    before = password_hash(app, "researcher")
    response = change(client, PASSWORDS["researcher"] if current is None else current, new, again)
    assert response.status_code == 400
    assert message in response.get_data(as_text=True)
    assert password_hash(app, "researcher") == before
    assert not signed_out(client) and not signed_out(other)


def test_guessing_the_current_password_is_limited_like_signing_in(app):
    client = signed_in(app, "researcher")
    for _ in range(app.config["LEVAL_LOGIN_FAILURES_PER_MINUTE"]):
        assert change(client, "wrong-guess-123").status_code == 400
    response = change(client, PASSWORDS["researcher"])
    assert response.status_code == 429 and int(response.headers["Retry-After"]) > 0
    assert AuthActions(app.test_client()).login("researcher").status_code == 429, "the same count as the sign-in's"


def test_sign_out_everywhere_else_ends_every_other_session(app):
    client = signed_in(app, "researcher")
    other, thief = signed_in(app, "researcher"), copy_of(app, client)
    bystander = signed_in(app, "annotator")
    response = client.post("/account/sessions", data={"csrf_token": csrf_token(client)})
    assert response.status_code == 302 and response.headers["Location"] == "/account/"
    assert not signed_out(client)
    assert signed_out(other) and signed_out(thief), "a copy of this browser's old cookie ends too"
    assert not signed_out(bystander), "other accounts are untouched"


def test_sign_out_everywhere_else_revokes_the_accounts_api_tokens_and_no_one_elses(app):
    """Issue 30: a token is revoked with "sign out everywhere"; the page's button is that button."""
    from app.services.api_tokens import authenticate_token, create_token

    with app.app_context():
        users = {u.username: u for u in db.session.scalars(select(User))}
        mine, theirs = create_token(users["researcher"], scope="write").secret, create_token(users["admin"], scope="read").secret
    client = signed_in(app, "researcher")
    assert client.get("/account/").status_code == 200 and b"/account/tokens" in client.get("/account/").data
    response = client.post("/account/sessions", data={"csrf_token": csrf_token(client)})
    assert response.status_code == 302
    with app.app_context():
        assert authenticate_token(mine) is None, "the account's token is revoked"
        assert authenticate_token(theirs) is not None, "another account's token lives on"


@pytest.mark.parametrize("url", ["/account/password", "/account/sessions"])
@pytest.mark.parametrize("token", [None, "forged"])
def test_account_writes_need_the_sessions_csrf_token(app, url, token):
    client = signed_in(app, "researcher")
    other = signed_in(app, "researcher")
    before = password_hash(app, "researcher")
    data = {"current_password": PASSWORDS["researcher"], "new_password": NEW, "new_password_again": NEW}
    if token:
        data["csrf_token"] = token
    assert client.post(url, data=data).status_code == 400
    assert password_hash(app, "researcher") == before and not signed_out(other)


# The admin's own row of the users page


def test_an_admins_own_row_offers_the_account_page_not_a_reset(app):
    client = signed_in(app, "admin")
    page = client.get("/admin/users").get_data(as_text=True)
    rows = dict(re.findall(r'<th scope="row">(\w+).*?</th>(.*?)</tr>', page, re.DOTALL))
    assert "Reset password for admin" not in rows["admin"]
    assert '<a class="button small" href="/account/#password">Change your password</a>' in rows["admin"]
    assert 'aria-label="Reset password for researcher"' in rows["researcher"]


def test_resetting_your_own_password_sends_you_to_the_account_page_still_signed_in(app):
    client = signed_in(app, "admin")
    with app.app_context():
        own = db.session.scalar(select(User.id).where(User.username == "admin"))
    before = password_hash(app, "admin")
    response = client.post(f"/admin/users/{own}/password", data={"csrf_token": csrf_token(client)})
    assert response.status_code == 302 and response.headers["Location"] == "/account/"
    assert "change it on your account page" in client.get("/account/").get_data(as_text=True)
    assert not signed_out(client), "the admin is not locked out"
    assert password_hash(app, "admin") == before
    assert AuthActions(app.test_client()).login("admin").status_code == 302
