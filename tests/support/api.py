"""Helpers for the token API's tests: tokens made with the app's own service, and their headers."""
from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from app.extensions import db
from app.models import ApiToken, User
from app.models.base import utcnow
from app.services.api_tokens import create_token


def make_token(app, username: str, scope: str = "write", *, expired: bool = False, revoked: bool = False,
               name: str = "") -> str:
    """A token of the account; `expired` or `revoked` ones are made live, then ended as time or a user would."""
    with app.app_context():
        user = db.session.scalars(select(User).where(User.username == username)).one()
        made = create_token(user, scope=scope, name=name, expires_days=1 if expired else None)
        token = db.session.get(ApiToken, made.token.id)
        if expired:
            token.expires_at = utcnow() - timedelta(seconds=1)
        if revoked:
            token.revoked_at = utcnow()
        db.session.commit()
        return made.secret


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}
