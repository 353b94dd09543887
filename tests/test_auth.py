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
    assert auth.login("admin").status_code == 429  # same IP


def test_successful_login_resets_the_user_counter(client, auth):
    for _ in range(5):
        auth.login("admin", "wrong-password")
    assert auth.login("admin").status_code == 302
