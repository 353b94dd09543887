"""Personal access tokens: made, listed, revoked and checked here and nowhere else.

A token is `lvs_` and 32 random bytes (URL-safe base64). Only its SHA-256 is stored: a random
secret of that length needs no slow hash, and a hash lets a request find its token in one lookup.
A token acts as its account, with the account's current role and never more; a `read` token
changes nothing. It stops working when it is revoked or expires, or when the account is
deactivated, signs out everywhere or has its password reset, or changed by its owner unless they keep
their tokens (each revokes every token of the account: services/accounts.py; docs/api.md lists them).
"""
from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select, update

from app.extensions import db
from app.models import ApiToken, User
from app.models.base import as_utc, utcnow
from app.models.tokens import TOKEN_SCOPES

TOKEN_PREFIX = "lvs_"
MAX_NAME = 80
MAX_EXPIRES_DAYS = 3650
# Last use is written at most this often per token: reading the API must not write on every request.
LAST_USE_RESOLUTION = timedelta(minutes=1)


class TokenError(ValueError):
    """A request to make or revoke a token that cannot be honoured."""


@dataclass(frozen=True)
class NewToken:
    token: ApiToken
    secret: str  # shown once, never stored


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def create_token(user: User, *, scope: str, name: str = "", expires_days: int | None = None) -> NewToken:
    """Make a token for the account; the returned secret is the only copy."""
    if scope not in TOKEN_SCOPES:
        raise TokenError(f"scope must be one of: {', '.join(TOKEN_SCOPES)}")
    if expires_days is not None and not 1 <= expires_days <= MAX_EXPIRES_DAYS:
        raise TokenError(f"expiry must be 1 to {MAX_EXPIRES_DAYS} days")
    name = " ".join((name or "").split())
    if len(name) > MAX_NAME:
        raise TokenError(f"the name may have at most {MAX_NAME} characters")
    if not user.active:
        raise TokenError("the account is deactivated")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(user_id=user.id, name=name, token_hash=hash_secret(secret), prefix=secret[:12], scope=scope,
                     expires_at=utcnow() + timedelta(days=expires_days) if expires_days else None)
    db.session.add(token)
    db.session.commit()
    return NewToken(token, secret)


def list_tokens(user: User | None = None) -> list[ApiToken]:
    """An account's tokens (every account's when None), newest first."""
    query = select(ApiToken).order_by(ApiToken.created_at.desc(), ApiToken.id.desc())
    if user is not None:
        query = query.where(ApiToken.user_id == user.id)
    return list(db.session.scalars(query))


def count_active(user: User) -> int:
    """How many of the account's tokens still work."""
    return sum(token_state(token) == "active" for token in list_tokens(user))


def token_state(token: ApiToken) -> str:
    """active, expired or revoked."""
    if token.revoked_at is not None:
        return "revoked"
    if token.expires_at is not None and as_utc(token.expires_at) <= utcnow():
        return "expired"
    return "active"


def revoke_token(token_id: int, *, owner: User | None = None) -> ApiToken:
    """Revoke one token (of `owner`, when given: another account's token is reported as unknown)."""
    token = db.session.get(ApiToken, token_id)
    if token is None or (owner is not None and token.user_id != owner.id):
        raise TokenError(f"no token #{token_id}")
    if token.revoked_at is None:
        token.revoked_at = utcnow()
        db.session.commit()
    return token


def revoke_all(user_id: int) -> int:
    """Revoke every live token of the account, in the caller's transaction; return how many."""
    return db.session.execute(
        update(ApiToken).where(ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None)).values(revoked_at=utcnow()),
        execution_options={"synchronize_session": False},
    ).rowcount


@dataclass(frozen=True)
class TokenCheck:
    """What a presented secret is: a live token, a token that ended (`ended` says how), or nothing known."""

    token: ApiToken | None = None
    ended: str = ""  # "revoked", "expired" or "deactivated": a token that once worked, not a guess
    ended_id: int | None = None


def check_token(secret: str) -> TokenCheck:
    """Tell a live token (its last use recorded) from one that ended and from a secret no token ever had.

    A token that ended is no guess (its secret was once given out), so the API counts its failures against
    the token alone, never against its address: a script left running with a stale token does not lock out
    the other scripts of its lab."""
    if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
        return TokenCheck()
    token = db.session.scalar(select(ApiToken).where(ApiToken.token_hash == hash_secret(secret)))
    if token is None:
        db.session.rollback()
        return TokenCheck()
    state = token_state(token) if token.user.is_active or token.revoked_at is not None else "deactivated"
    if state != "active":
        ended = TokenCheck(ended=state, ended_id=token.id)
        db.session.rollback()
        return ended
    now = utcnow()
    if token.last_used_at is None or as_utc(token.last_used_at) <= now - LAST_USE_RESOLUTION:
        token.last_used_at = now
        db.session.commit()
    return TokenCheck(token=token)


def authenticate_token(secret: str) -> ApiToken | None:
    """The live token of an active account with this secret, its last use recorded; else None."""
    return check_token(secret).token
