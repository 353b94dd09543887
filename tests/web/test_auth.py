"""Sign-in, sign-out, redirects, CSRF and the secret key."""
from __future__ import annotations

from app import create_app
from app.extensions import db
from app.models import User
from sqlalchemy import select


def test_login_page_labels(client):
    page = client.get("/login").get_data(as_text=True)
    assert '<label for="username">Username</label>' in page
    assert '<label for="password">Password</label>' in page
    assert ">Sign in</button>" in page


def test_signed_out_pages_redirect_to_login(client):
    response = client.get("/")
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_login_and_logout(client, auth):
    response = auth.login("researcher")
    assert response.status_code == 302
    page = client.get("/").get_data(as_text=True)
    assert "researcher" in page and "Sign out" in page
    auth.logout()
    assert client.get("/").status_code == 302


def test_wrong_password_is_refused(client, auth):
    response = auth.login("researcher", "nope-nope-nope")
    assert response.status_code == 401
    assert "Wrong username or password" in response.get_data(as_text=True)
    assert client.get("/").status_code == 302


def test_inactive_account_cannot_sign_in(app, client, auth):
    with app.app_context():
        user = db.session.scalars(select(User).where(User.username == "annotator")).one()
        user.active = False
        db.session.commit()
    assert auth.login("annotator").status_code == 403


def test_login_without_csrf_token_is_refused(client):
    response = client.post("/login", data={"username": "admin", "password": "admin-pass-123"})
    assert response.status_code == 400
    assert client.get("/").status_code == 302


def test_next_parameter_only_follows_local_paths(client, auth):
    token = auth.token()
    response = client.post(
        "/login?next=https://example.org/", data={"username": "admin", "password": "admin-pass-123", "csrf_token": token}
    )
    assert response.headers["Location"] == "/"


def test_passwords_are_hashed_slowly(app):
    with app.app_context():
        user = db.session.scalars(select(User).where(User.username == "admin")).one()
        assert user.password_hash.startswith("scrypt:") and "admin-pass-123" not in user.password_hash


def test_secret_key_is_generated_once_in_instance(tmp_path):
    instance = tmp_path / "inst"
    first = create_app({"INSTANCE_PATH": instance})
    second = create_app({"INSTANCE_PATH": instance})
    key_file = instance / "secret_key"
    assert key_file.exists() and (key_file.stat().st_mode & 0o777) == 0o600
    assert first.config["SECRET_KEY"] == second.config["SECRET_KEY"] == key_file.read_text().strip()
    assert len(first.config["SECRET_KEY"]) == 64


def test_session_cookie_flags(client, auth):
    response = auth.login("admin")
    cookie = response.headers.get("Set-Cookie", "")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_failed_logins_are_rate_limited(client, auth):
    for _ in range(10):
        assert auth.login("researcher", "wrong-password").status_code == 401
    response = auth.login("researcher", "wrong-password")
    assert response.status_code == 429 and int(response.headers["Retry-After"]) > 0
    # Even the right password waits until the window passes: guessing gains nothing.
    assert auth.login("researcher").status_code == 429
    assert auth.login("admin").status_code == 302  # same address, another user: the address allows 100 a minute


def test_successful_login_resets_the_user_counter(client, auth):
    for _ in range(5):
        auth.login("admin", "wrong-password")
    assert auth.login("admin").status_code == 302


# Session revocation: a session ends for good on sign-out, password change, reset and deactivation.


def _copy_session(app, client):
    """A second browser holding a copy of client's session cookie (as a thief would)."""
    thief = app.test_client()
    cookie = client.get_cookie(app.config.get("SESSION_COOKIE_NAME", "session"))
    assert cookie is not None, "no session cookie to copy"
    thief.set_cookie(cookie.key, cookie.value)
    assert not _signed_out(thief), "the copied cookie must work before the session is ended"
    return thief


def _signed_out(client) -> bool:
    response = client.get("/")
    return response.status_code == 302 and "/login" in response.headers["Location"]


def _admin_client(app):
    from tests.conftest import AuthActions

    admin = app.test_client()
    admin_auth = AuthActions(admin)
    assert admin_auth.login("admin").status_code == 302
    return admin, admin_auth


def _user_id(app, name: str) -> int:
    with app.app_context():
        return db.session.scalar(select(User.id).where(User.username == name))


def test_a_cookie_copied_before_sign_out_no_longer_works(app, client, auth):
    auth.login("researcher")
    thief = _copy_session(app, client)
    other_browser = app.test_client()
    from tests.conftest import AuthActions

    assert AuthActions(other_browser).login("researcher").status_code == 302
    auth.logout()
    assert _signed_out(thief), "a copied cookie must not outlive sign-out"
    assert _signed_out(other_browser), "sign-out ends every session of the account"
    assert auth.login("researcher").status_code == 302 and not _signed_out(client)  # signing in again works


def test_an_admin_password_reset_ends_the_users_sessions(app, client, auth):
    auth.login("annotator")
    thief = _copy_session(app, client)
    admin, admin_auth = _admin_client(app)
    admin.post(f"/admin/users/{_user_id(app, 'annotator')}/password", data={"csrf_token": admin_auth.token()})
    assert _signed_out(client) and _signed_out(thief)
    assert not _signed_out(admin), "the admin's own session is untouched"


def test_deactivation_ends_sessions_and_reactivation_does_not_revive_them(app, client, auth):
    auth.login("annotator")
    thief = _copy_session(app, client)
    admin, admin_auth = _admin_client(app)
    target = _user_id(app, "annotator")
    admin.post(f"/admin/users/{target}/active", data={"csrf_token": admin_auth.token(), "active": "0"})
    assert _signed_out(thief)
    admin.post(f"/admin/users/{target}/active", data={"csrf_token": admin_auth.token(), "active": "1"})
    assert _signed_out(client) and _signed_out(thief), "a reactivated account signs in afresh"
    assert auth.login("annotator").status_code == 302 and not _signed_out(client)


def test_a_password_change_ends_the_accounts_sessions(app, client, auth):
    auth.login("researcher")
    thief = _copy_session(app, client)
    with app.app_context():
        user = db.session.scalars(select(User).where(User.username == "researcher")).one()
        user.set_password("a-brand-new-pass-1")
        db.session.commit()
    assert _signed_out(client) and _signed_out(thief)
    assert auth.login("researcher", "a-brand-new-pass-1").status_code == 302 and not _signed_out(client)


def test_a_session_cookie_with_a_bare_user_id_is_refused(app):
    """Cookies made before session versions carried only the id: they sign in again."""
    from app.web.security import load_user

    with app.app_context():
        user_id = _user_id(app, "admin")
        assert load_user(str(user_id)) is None
        assert load_user(f"{user_id}.0") is not None
        assert load_user(f"{user_id}.1") is None and load_user("x.0") is None and load_user(f"{2**64}.0") is None


def test_a_wrong_password_takes_as_long_for_an_unknown_user_as_for_a_known_one(app, monkeypatch):
    """Usernames cannot be told apart by timing: both paths check one password hash of the same method and
    cost, and their fastest times are within 20% of each other.

    The fastest of 15 interleaved attempts, not the median: on a loaded machine (CI runs two test
    processes and browsers) a median carries the others' bursts, the minimum is the work itself."""
    import time

    import app.models.users as users_model
    import app.services.accounts as accounts
    from app.services.login_limits import LoginLimiter
    from tests.conftest import AuthActions

    checked: list[str] = []

    def recording(check):
        def wrapper(pwhash, password):
            checked.append(pwhash.split("$", 1)[0])  # method and cost, e.g. scrypt:32768:8:1
            return check(pwhash, password)
        return wrapper

    monkeypatch.setattr(accounts, "check_password_hash", recording(accounts.check_password_hash))
    monkeypatch.setattr(users_model, "check_password_hash", recording(users_model.check_password_hash))
    app.extensions["login_limiter"] = LoginLimiter(limit=1000, window_seconds=60)
    client = app.test_client()
    actions = AuthActions(client)
    token = actions.token()
    timings: dict[str, list[float]] = {"researcher": [], "nobody-here": []}

    def attempt(name: str) -> None:
        started = time.perf_counter()
        response = client.post("/login", data={"username": name, "password": "wrong-password", "csrf_token": token})
        timings[name].append(time.perf_counter() - started)
        assert response.status_code == 401

    attempt("researcher"), attempt("nobody-here")  # warm up (the dummy hash is made once)
    assert len(checked) == 2 and checked[0] == checked[1], checked  # one check each, the same method and cost
    timings = {name: [] for name in timings}
    for _ in range(15):
        for name in timings:
            attempt(name)
    known, unknown = (min(timings[name]) for name in ("researcher", "nobody-here"))
    assert abs(known - unknown) / max(known, unknown) < 0.20, f"known {known * 1000:.0f} ms, unknown {unknown * 1000:.0f} ms"
