"""Who calls the API: a personal access token in `Authorization: Bearer …`, never a session cookie.

`authenticate` runs before every API view (app.web.security calls it instead of the session check):
a missing, malformed, unknown, revoked or expired token is 401; a presented token that is not live is
counted per client address by the sign-in limiter (services/login_limits.py), so guessing is throttled like passwords
(429 with Retry-After once the address is over its limit). A good token makes its account the
request's user (Flask-Login's current_user), so every shared helper sees the token's account.
`access` then checks the account's role and, for writes, the token's scope, and last the media type of the
body a view takes (415 for another: api.spec), before the view validates it.
"""
from __future__ import annotations

import math
from functools import wraps

from flask import current_app, g, jsonify, request

from app.models.users import STAFF_ROLES
from app.services.api_tokens import authenticate_token
from app.services.login_limits import address_key
from app.web.api.spec import body_media_type, refuse_other_media_types
from app.web.extensions import login_manager


def _error(status: int, message: str, headers: dict | None = None):
    response = jsonify(error=message, status=status)
    response.status_code = status
    response.headers.update(headers or {})
    return response


def authenticate():
    """None when the request carries a live token (its account is now current_user); else the error answer."""
    scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
    limiter = current_app.extensions["login_limiter"]
    address = address_key(request.remote_addr)
    challenge = {"WWW-Authenticate": 'Bearer realm="api"'}
    if limiter.count(address) >= limiter.limit_of(address):  # over the limit: not even a right token is checked
        wait = limiter.acquire(address) or limiter.window
        return _error(429, "too many bad tokens from this address; try again later",
                      {"Retry-After": str(math.ceil(wait))})
    secret = secret.strip()
    if scheme.lower() != "bearer" or not secret:  # no guess was made: nothing to count
        return _error(401, "send a personal access token as `Authorization: Bearer <token>` (session cookies "
                           "are not accepted here)", challenge)
    token = authenticate_token(secret)
    if token is None:
        wait = limiter.acquire(address)
        if wait:
            return _error(429, "too many bad tokens from this address; try again later",
                          {"Retry-After": str(math.ceil(wait))})
        return _error(401, "the token is unknown, revoked or expired, or its account is deactivated", challenge)
    g.api_token = token
    login_manager._update_request_context_with_user(token.user)
    return None


def access(*, write: bool, roles: tuple[str, ...] | None = STAFF_ROLES):
    """Allow the view to tokens whose account has one of `roles` (None: any account), and, for a write, scope write;
    then refuse a body of another media type than the view takes."""

    def decorator(view):
        media_type = body_media_type(view)

        @wraps(view)
        def wrapper(*args, **kwargs):
            token = g.api_token
            if roles is not None and token.user.role not in roles:
                return _error(403, f"a {token.user.role} account may not use this endpoint")
            if write and token.scope != "write":
                return _error(403, "this token is read-only: make a token with scope 'write' to change anything")
            if media_type:
                refuse_other_media_types(media_type)
            return view(*args, **kwargs)

        wrapper.required_roles = roles or ("admin", "researcher", "annotator")
        wrapper.api_write = write
        return wrapper

    return decorator


def caller():
    """The account of the request's token."""
    return g.api_token.user
