"""App-wide access rules: sign-in everywhere but a few public endpoints, and role checks."""
from __future__ import annotations

from functools import wraps

from flask import Flask, abort, jsonify, redirect, request, url_for
from flask_login import current_user

from app.extensions import db
from app.models import User
from app.models.ids import parse_db_id
from app.web.errors import is_api_request
from app.web.extensions import login_manager

PUBLIC_ENDPOINTS = frozenset({"auth.login", "home.healthz", "static"})
API_BLUEPRINT = "api"  # app.web.api: signed in by token, not by session


@login_manager.user_loader
def load_user(session_id: str) -> User | None:
    """The session's account, while its session version is current and the account active (else signed out)."""
    user_id, _, version = session_id.partition(".")
    user_id = parse_db_id(user_id)
    if user_id is None or parse_db_id(version) is None:
        return None  # includes sessions from before session versions: they sign in again
    user = db.session.get(User, user_id)
    if user is None or not user.is_active or str(user.session_version or 0) != version:
        return None
    return user


def init_security(app: Flask) -> None:
    """Require a session on every endpoint not listed as public."""

    @app.before_request
    def require_login():
        if request.endpoint in PUBLIC_ENDPOINTS or request.endpoint is None:
            return None
        if request.blueprint == API_BLUEPRINT:  # a personal access token, never the session cookie
            from app.web.api.auth import authenticate

            return authenticate()
        if current_user.is_authenticated:
            return None
        if is_api_request():
            return jsonify(error="sign-in required"), 401
        return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))

    @app.after_request
    def security_headers(response):
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        # Everything is local. Inline style attributes are allowed (progress bars, SVG); scripts never inline.
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; "
            "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
        )
        return response


def roles_required(*roles: str):
    """Allow the view only to signed-in users with one of these roles (403 otherwise)."""

    def decorator(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            if not current_user.is_authenticated:
                return login_manager.unauthorized()
            if current_user.role not in roles:
                abort(403)
            return view(*args, **kwargs)

        wrapper.required_roles = roles
        return wrapper

    return decorator


def may_read_call_details() -> bool:
    """Admins read a failed LLM call's detail; everyone else "the endpoint failed" (services.llm.failures)."""
    return current_user.is_authenticated and current_user.role == "admin"


def staff_required(view):
    """Allow admins and researchers."""
    return roles_required("admin", "researcher")(view)
