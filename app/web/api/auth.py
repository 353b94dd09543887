"""Who calls the API: a personal access token in `Authorization: Bearer …`, never a session cookie.

`authenticate` runs before every API view (app.web.security calls it instead of the session check):
a missing, malformed, unknown, revoked or expired token is 401. A secret no token ever had is a guess:
it is counted per client address by the sign-in limiter (services/login_limits.py), so guessing is
throttled like passwords (429 with Retry-After once the address is over its limit). A token that ended
(revoked, expired, its account deactivated) is no guess: its failures are counted against that token
alone, so a forgotten script with a stale token never locks out the good tokens of its address. Every
answer that a limit counted carries the IETF RateLimit headers (RateLimit-Limit, -Remaining, -Reset).
A good token makes its account the request's user (Flask-Login's current_user), so every shared helper
sees the token's account.
`access` then checks the account's role and, for writes, the token's scope, and last the media type of the
body a view takes (415 for another: api.spec), before the view validates it.
"""
from __future__ import annotations

import math
from functools import wraps

from flask import current_app, g, request

from app.models.users import STAFF_ROLES
from app.services.api_tokens import check_token
from app.services.login_limits import address_key, token_key
from app.web.api.idempotency import run as run_once
from app.web.api.spec import body_media_type, refuse_other_media_types
from app.web.errors import problem_response
from app.web.extensions import login_manager

ENDED = {"revoked": "the token was revoked", "expired": "the token has expired",
         "deactivated": "the token's account is deactivated"}
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="api"'}


def _refuse(status: int, message: str, headers: dict | None = None):
    return problem_response(status, message, headers=headers)


def limit_headers(key: str, *, wait: float = 0.0) -> dict[str, str]:
    """The IETF RateLimit headers of a limiter key (and Retry-After when the request was refused for it)."""
    limiter = current_app.extensions["login_limiter"]
    limit = limiter.limit_of(key)
    used, reset = limiter.usage(key)
    headers = {"RateLimit-Limit": str(limit), "RateLimit-Remaining": str(max(0, limit - used)),
               "RateLimit-Reset": str(math.ceil(max(reset, wait))),
               "RateLimit-Policy": f"{limit};w={math.ceil(limiter.window)}"}
    if wait:
        headers["Retry-After"] = str(math.ceil(wait))
    return headers


def _too_many(key: str, wait: float, *, stale: bool = False):
    what = "failed requests with this token (it ended)" if stale else "bad tokens from this address"
    return _refuse(429, f"too many {what}; try again later", limit_headers(key, wait=wait))


def authenticate():
    """None when the request carries a live token (its account is now current_user); else the error answer."""
    scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
    limiter = current_app.extensions["login_limiter"]
    address = address_key(request.remote_addr)
    if limiter.count(address) >= limiter.limit_of(address):  # over the limit: not even a right token is checked
        return _too_many(address, limiter.acquire(address) or limiter.window)
    secret = secret.strip()
    if scheme.lower() != "bearer" or not secret:  # no guess was made: nothing to count
        return _refuse(401, "send a personal access token as `Authorization: Bearer <token>` (session cookies "
                            "are not accepted here)", CHALLENGE)
    found = check_token(secret)
    if found.token is not None:
        g.api_token = found.token
        login_manager._update_request_context_with_user(found.token.user)
        return None
    key = token_key(found.ended_id) if found.ended else address
    wait = limiter.acquire(key)
    if wait:
        return _too_many(key, wait, stale=bool(found.ended))
    if found.ended:
        return _refuse(401, f"{ENDED[found.ended]}: make a new one on the API tokens page",
                       {**CHALLENGE, **limit_headers(key)})
    return _refuse(401, "the token is unknown, revoked or expired, or its account is deactivated",
                   {**CHALLENGE, **limit_headers(key)})


def access(*, write: bool, roles: tuple[str, ...] | None = STAFF_ROLES):
    """Allow the view to tokens whose account has one of `roles` (None: any account), and, for a write, scope write;
    then refuse a body of another media type than the view takes."""

    def decorator(view):
        media_type = body_media_type(view)
        creates = getattr(view, "api_creates", False)

        @wraps(view)
        def wrapper(*args, **kwargs):
            token = g.api_token
            if roles is not None and token.user.role not in roles:
                return _refuse(403, f"a {token.user.role} account may not use this endpoint")
            if write and token.scope != "write":
                return _refuse(403, "this token is read-only: make a token with scope 'write' to change anything")
            if media_type:
                refuse_other_media_types(media_type)
            if creates:
                return run_once(view, token.user_id, *args, **kwargs)
            return view(*args, **kwargs)

        wrapper.required_roles = roles or ("admin", "researcher", "annotator")
        wrapper.api_write = write
        return wrapper

    return decorator


def caller():
    """The account of the request's token."""
    return g.api_token.user
