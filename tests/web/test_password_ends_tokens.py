"""A new password ends the account's API tokens (issue 41, item 2): an admin's reset, `run.py reset-password`, and
the owner's own change unless they choose to keep them.

A reset is how a lab recovers a stolen account; a write token the thief made used to keep working through it.
Each test uses a real write token against the real API: a study is created with it before, and after the
token is refused with 401.
"""
from __future__ import annotations

import re

from sqlalchemy import select

from app.extensions import db
from app.models import User
from tests.conftest import PASSWORDS, AuthActions, csrf_token
from tests.support.api import bearer, make_token

NEW = "a-fresh-pass-4567"


def create_study(app, secret: str, name: str) -> int:
    """The status of a real write through the API with the token: a new draft study."""
    answer = app.test_client().post("/api/v1/studies", headers=bearer(secret), json={"name": name})
    assert answer.is_json and answer.get_json()["status" if answer.status_code >= 400 else "name"], answer
    return answer.status_code


def signed_in(app, username: str):
    client = app.test_client()
    assert AuthActions(client).login(username).status_code == 302
    return client


def change_own_password(client, *, end_tokens: bool | None):
    """The account page's form as a browser sends it: the box is sent when ticked, left out when not."""
    data = {"current_password": PASSWORDS["researcher"], "new_password": NEW, "new_password_again": NEW,
            "csrf_token": csrf_token(client)}
    if end_tokens:
        data["end_tokens"] = "y"
    return client.post("/account/password", data=data)


def test_the_account_page_offers_to_end_the_tokens_ticked_and_says_what_it_does(demo):
    make_token(demo, "researcher", "write")
    page = signed_in(demo, "researcher").get("/account/").get_data(as_text=True)
    box = re.search(r'<input[^>]*name="end_tokens"[^>]*>', page)
    assert box and " checked" in box.group(0) and 'type="checkbox"' in box.group(0)
    label = re.search(r'<label[^>]*for="end-tokens"[^>]*>(.*?)</label>', page, re.DOTALL)
    assert label and "Also end my API tokens" in label.group(1)
    hint = re.search(r'id="end-tokens-hint"[^>]*>(.*?)</', page, re.DOTALL).group(1)
    assert "1 active API token" in " ".join(hint.split()), hint


def test_changing_your_own_password_ends_your_tokens_as_the_page_sends_it(demo):
    secret, others = make_token(demo, "researcher", "write"), make_token(demo, "admin", "write")
    assert create_study(demo, secret, "before-the-change") == 201
    client = signed_in(demo, "researcher")
    response = change_own_password(client, end_tokens=True)
    assert response.status_code == 302
    assert create_study(demo, secret, "after-the-change") == 401
    assert "your 1 API token is revoked" in " ".join(client.get("/account/").get_data(as_text=True).split())
    assert create_study(demo, others, "another-accounts-token") == 201, "another account's token lives on"


def test_unticking_the_box_keeps_the_tokens_and_still_ends_the_other_sessions(demo):
    secret = make_token(demo, "researcher", "write")
    client, other = signed_in(demo, "researcher"), signed_in(demo, "researcher")
    assert change_own_password(client, end_tokens=False).status_code == 302
    assert "Your API tokens keep working" in client.get("/account/").get_data(as_text=True)
    assert create_study(demo, secret, "kept-through-the-change") == 201
    assert other.get("/").status_code == 302, "the other browser is signed out"


def test_an_admins_reset_ends_the_accounts_tokens(demo):
    secret = make_token(demo, "researcher", "write")
    assert create_study(demo, secret, "before-the-reset") == 201
    admin = signed_in(demo, "admin")
    with demo.app_context():
        target = db.session.scalar(select(User.id).where(User.username == "researcher"))
    page = admin.post(f"/admin/users/{target}/password", data={"csrf_token": csrf_token(admin)})
    assert page.status_code == 200
    assert create_study(demo, secret, "after-the-reset") == 401
    assert "API tokens are revoked" in " ".join(page.get_data(as_text=True).split())


def test_reset_password_on_the_command_line_ends_the_accounts_tokens(demo):
    secret = make_token(demo, "researcher", "write")
    assert create_study(demo, secret, "before-the-command") == 201
    result = demo.test_cli_runner().invoke(args=["reset-password", "researcher"])
    assert result.exit_code == 0, result.output
    assert create_study(demo, secret, "after-the-command") == 401
    assert "API tokens are revoked" in " ".join(result.output.split())
