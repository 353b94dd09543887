"""How long a sign-in lasts: the browser's session, or "Keep me signed in" up to a fixed age.

The session is Flask's signed cookie. Without "Keep me signed in" it is a browser-session cookie
(no expiry: it ends when the browser closes); with it, the cookie expires when the sign-in is
PERMANENT_SESSION_LIFETIME old (LEVAL_KEEP_SIGNED_IN_DAYS). Either way the server itself refuses a
sign-in older than that, whatever cookie a browser (or a copy of it) sends back, so the bound does
not rest on the browser. The account's session version (app.web.security.load_user) ends any
session sooner: sign-out, a password change, "sign out everywhere else", a reset, deactivation.
"""
from __future__ import annotations

import time
from datetime import UTC, datetime

from flask import Flask, current_app, session
from flask.sessions import SecureCookieSessionInterface, SessionMixin
from flask_login import login_user, logout_user

from app.models import User

SIGNED_IN_AT = "signed_in_at"  # seconds since the epoch, set once per sign-in


class SignInSessions(SecureCookieSessionInterface):
    """Flask's cookie sessions, bounded by the age of the sign-in rather than of the last response."""

    def open_session(self, app: Flask, request):
        opened = super().open_session(app, request)
        started = opened.get(SIGNED_IN_AT) if opened is not None else None
        if isinstance(started, (int, float)) and time.time() - started > app.permanent_session_lifetime.total_seconds():
            return self.session_class()  # the sign-in is over: an empty, signed-out session
        return opened

    def get_expiration_time(self, app: Flask, session: SessionMixin) -> datetime | None:
        started = session.get(SIGNED_IN_AT)
        if session.permanent and isinstance(started, (int, float)):
            return datetime.fromtimestamp(started, UTC) + app.permanent_session_lifetime
        return super().get_expiration_time(app, session)


def install(app: Flask) -> None:
    app.session_interface = SignInSessions()


def start_session(user: User, *, keep: bool) -> None:
    """Sign this browser in; `keep` makes the cookie outlive the browser until the sign-in's lifetime ends."""
    login_user(user)
    session.permanent = keep
    session[SIGNED_IN_AT] = int(time.time())


def renew_session(user: User) -> None:
    """Keep this browser signed in after the account's session version was raised (the others end).

    The sign-in's start and its "keep" choice stay: renewing never lengthens a session.
    """
    login_user(user)


def end_session() -> None:
    """Sign this browser out; the next sign-in chooses afresh whether to be kept."""
    logout_user()
    session.pop(SIGNED_IN_AT, None)
    session.permanent = False


def lifetime_text() -> str:
    """The longest a sign-in lasts, in words ("14 days", "12 hours")."""
    hours = round(current_app.permanent_session_lifetime.total_seconds() / 3600)
    if hours % 24:
        return f"{hours} hour{'s' * (hours != 1)}"
    return f"{hours // 24} day{'s' * (hours != 24)}"
