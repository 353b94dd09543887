"""Admin account management: create, deactivate and reactivate, reset a password."""
from __future__ import annotations

import re

from sqlalchemy import select

from app.extensions import db
from app.models import User
from tests.conftest import PASSWORDS, AuthActions

PASSWORD_RE = re.compile(r'<code id="one-time-password">([^<]+)</code>')


def _admin(app):
    client = app.test_client()
    auth = AuthActions(client)
    assert auth.login("admin").status_code == 302
    return client, auth


def _user(app, name: str) -> User:
    with app.app_context():
        return db.session.scalars(select(User).where(User.username == name)).one()


def _can_sign_in(app, name: str, password: str) -> bool:
    return AuthActions(app.test_client()).login(name, password).status_code == 302


def test_only_admins_manage_accounts(app, client, auth):
    auth.login("researcher")
    assert client.get("/admin/users").status_code == 403
    assert client.post("/admin/users", data={"csrf_token": auth.token(), "username": "x1"}).status_code == 403


def test_create_with_generated_password_shows_it_once(app):
    client, auth = _admin(app)
    page = client.get("/admin/users").get_data(as_text=True)
    assert "Create an account" in page and "researcher" in page
    response = client.post("/admin/users", data={"csrf_token": auth.token(), "username": "dana", "role": "annotator"})
    password = PASSWORD_RE.search(response.get_data(as_text=True)).group(1)
    assert response.headers["Cache-Control"] == "no-store"
    assert _user(app, "dana").role == "annotator" and _can_sign_in(app, "dana", password)
    # Not carried in a flashed message (the session cookie is signed, not encrypted).
    assert password not in client.get("/admin/users").get_data(as_text=True)


def test_create_with_typed_password_and_refusals(app):
    client, auth = _admin(app)
    done = client.post("/admin/users", data={"csrf_token": auth.token(), "username": "eli", "role": "researcher",
                                             "password": "typed-pass-99"}, follow_redirects=True)
    assert "Created researcher &#39;eli&#39;" in done.get_data(as_text=True)
    assert _can_sign_in(app, "eli", "typed-pass-99")
    again = client.post("/admin/users", data={"csrf_token": auth.token(), "username": "ELI", "role": "annotator",
                                              "password": "typed-pass-99"})
    assert again.status_code == 400 and "already exists" in again.get_data(as_text=True)
    bad = client.post("/admin/users", data={"csrf_token": auth.token(), "username": "<script>", "role": "annotator"})
    assert bad.status_code == 400 and "<script>" not in bad.get_data(as_text=True)


def test_deactivate_ends_sessions_and_reactivate_restores(app):
    client, auth = _admin(app)
    annotator = app.test_client()
    AuthActions(annotator).login("annotator")
    assert annotator.get("/").status_code in (200, 302) and "/login" not in annotator.get("/").headers.get("Location", "")
    target = _user(app, "annotator").id
    client.post(f"/admin/users/{target}/active", data={"csrf_token": auth.token(), "active": "0"})
    assert not _user(app, "annotator").active
    assert "/login" in annotator.get("/").headers["Location"], "an open session must end on deactivation"
    assert not _can_sign_in(app, "annotator", PASSWORDS["annotator"])
    client.post(f"/admin/users/{target}/active", data={"csrf_token": auth.token(), "active": "1"})
    assert _can_sign_in(app, "annotator", PASSWORDS["annotator"])


def test_admin_cannot_lock_themselves_out(app):
    client, auth = _admin(app)
    me = _user(app, "admin").id
    page = client.post(f"/admin/users/{me}/active", data={"csrf_token": auth.token(), "active": "0"},
                       follow_redirects=True).get_data(as_text=True)
    assert "cannot deactivate your own account" in page and _user(app, "admin").active


def test_reset_password(app):
    client, auth = _admin(app)
    target = _user(app, "researcher").id
    response = client.post(f"/admin/users/{target}/password", data={"csrf_token": auth.token()})
    password = PASSWORD_RE.search(response.get_data(as_text=True)).group(1)
    assert len(password) >= 12
    assert not _can_sign_in(app, "researcher", PASSWORDS["researcher"])
    assert _can_sign_in(app, "researcher", password)
