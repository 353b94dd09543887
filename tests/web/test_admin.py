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


def test_two_admins_deactivating_each_other_at_once_leave_one_active_admin(app):
    """Both requests pass their checks before either writes: the last-admin rule must still hold."""
    import threading

    from sqlalchemy import event

    from app.services.accounts import create_user

    with app.app_context():
        create_user("admin2", "admin2-pass-123", "admin")
        ids = {name: db.session.scalar(select(User.id).where(User.username == name)) for name in ("admin", "admin2")}
    for trial in range(3):
        clients = {}
        for name, password in (("admin", PASSWORDS["admin"]), ("admin2", "admin2-pass-123")):
            client = app.test_client()
            assert AuthActions(client).login(name, password).status_code == 302
            clients[name] = (client, AuthActions(client).token())
        meet = threading.Barrier(2)

        def hold_until_both_write(conn, cursor, statement, parameters, context, executemany):
            if statement.lstrip().upper().startswith("UPDATE USERS SET ACTIVE"):
                try:
                    meet.wait(timeout=2)  # both requests have read the admin count by now
                except threading.BrokenBarrierError:
                    pass

        with app.app_context():
            engine = db.engine
        event.listen(engine, "before_cursor_execute", hold_until_both_write)
        try:
            threads = [threading.Thread(target=lambda me=me, other=other: clients[me][0].post(
                f"/admin/users/{ids[other]}/active", data={"csrf_token": clients[me][1], "active": "0"}))
                for me, other in (("admin", "admin2"), ("admin2", "admin"))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
        finally:
            event.remove(engine, "before_cursor_execute", hold_until_both_write)
        with app.app_context():
            active = db.session.scalars(select(User.username).where(User.role == "admin", User.active.is_(True))).all()
            assert len(active) == 1, f"trial {trial}: active admins {active}"
            db.session.execute(User.__table__.update().values(active=True))
            db.session.commit()


def test_usernames_the_database_could_not_store_are_refused(app):
    client, auth = _admin(app)
    for username in ("nul\x00name", "n" * 81):
        response = client.post("/admin/users", data={"csrf_token": auth.token(), "username": username,
                                                     "role": "annotator"})
        assert response.status_code == 400 and "Username must be 2–80 letters" in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalar(select(User.id).where(User.username.like("nul%"))) is None


def test_the_admin_area_opens_on_the_accounts_and_only_for_admins(app, client, auth):
    """First-hour finding 17: /admin/ was a 404."""
    auth.login("admin")
    response = client.get("/admin/")
    assert response.status_code == 302 and response.headers["Location"].endswith("/admin/users")
    auth.logout()
    auth.login("researcher")
    assert client.get("/admin/").status_code == 403
