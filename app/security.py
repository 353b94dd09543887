"""App-wide access rules: sign-in everywhere but a few public endpoints, and role checks."""
from __future__ import annotations

from functools import wraps

from flask import Flask, abort, jsonify, redirect, request, url_for
from flask_login import current_user

from .extensions import db, login_manager
from .models import User

PUBLIC_ENDPOINTS = frozenset({"auth.login", "core.healthz", "static"})


@login_manager.user_loader
def load_user(user_id: str) -> User | None:
    user = db.session.get(User, int(user_id)) if user_id.isdigit() else None
    # A deactivated account loses its open sessions too, not only the next sign-in.
    return user if user is not None and user.is_active else None


def wants_json() -> bool:
    return request.is_json or request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json"


def init_security(app: Flask) -> None:
    """Require a session on every endpoint not listed as public."""

    @app.before_request
    def require_login():
        if request.endpoint in PUBLIC_ENDPOINTS or request.endpoint is None:
            return None
        if current_user.is_authenticated:
            return None
        if wants_json():
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


def staff_required(view):
    """Allow admins and researchers."""
    return roles_required("admin", "researcher")(view)
