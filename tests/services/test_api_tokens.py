"""Personal access tokens: stored only as a hash, live until revoked, expired or their account ends."""
from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import ApiToken, User
from app.models.base import utcnow
from app.services.accounts import end_sessions, set_active, sign_out_everywhere
from app.services.api_tokens import (
    TokenError,
    authenticate_token,
    create_token,
    hash_secret,
    list_tokens,
    revoke_token,
    token_state,
)


def account(name: str) -> User:
    return db.session.scalars(select(User).where(User.username == name)).one()


def test_the_secret_is_returned_once_and_only_its_hash_is_stored(app):
    with app.app_context():
        made = create_token(account("researcher"), scope="read", name="  cluster   job ", expires_days=30)
        assert made.secret.startswith("lvs_") and len(made.secret) > 40
        row = db.session.get(ApiToken, made.token.id)
        stored = [getattr(row, column.name) for column in ApiToken.__table__.columns]
        assert made.secret not in [value for value in stored if isinstance(value, str)]
        assert row.token_hash == hash_secret(made.secret) and row.prefix == made.secret[:12]
        assert row.name == "cluster job" and row.scope == "read" and token_state(row) == "active"
        assert authenticate_token(made.secret).id == row.id
        assert authenticate_token(made.secret + "x") is None and authenticate_token("") is None


@pytest.mark.parametrize("kwargs, message", [
    ({"scope": "admin"}, "scope"), ({"scope": "read", "expires_days": 0}, "expiry"),
    ({"scope": "read", "name": "x" * 81}, "name")])
def test_bad_requests_make_no_token(app, kwargs, message):
    with app.app_context():
        with pytest.raises(TokenError, match=message):
            create_token(account("researcher"), **kwargs)
        assert list_tokens() == []


def test_last_use_is_recorded(app):
    with app.app_context():
        made = create_token(account("researcher"), scope="read")
        assert made.token.last_used_at is None
        authenticate_token(made.secret)
        assert db.session.get(ApiToken, made.token.id).last_used_at is not None


def test_expired_and_revoked_tokens_stop_working(app):
    with app.app_context():
        user = account("researcher")
        expiring, revoked = create_token(user, scope="read", expires_days=1), create_token(user, scope="write")
        db.session.get(ApiToken, expiring.token.id).expires_at = utcnow() - timedelta(minutes=1)
        db.session.commit()
        revoke_token(revoked.token.id, owner=user)
        assert authenticate_token(expiring.secret) is None and authenticate_token(revoked.secret) is None
        assert {token_state(t) for t in list_tokens(user)} == {"expired", "revoked"}
        with pytest.raises(TokenError):  # another account's token is not found
            revoke_token(expiring.token.id, owner=account("admin"))


def test_deactivation_and_sign_out_everywhere_revoke_every_token_but_plain_sign_out_does_not(app):
    with app.app_context():
        researcher, admin = account("researcher"), account("admin")
        kept = create_token(researcher, scope="read")
        end_sessions(researcher)  # signing out of a browser must not stop a cluster's script
        assert authenticate_token(kept.secret) is not None
        sign_out_everywhere(researcher)
        assert authenticate_token(kept.secret) is None
        assert researcher.session_version >= 2
        other = create_token(admin, scope="write")
        annotator_token = create_token(account("annotator"), scope="read")
        set_active(account("annotator"), False, by=admin)
        set_active(account("annotator"), True, by=admin)
        assert authenticate_token(annotator_token.secret) is None  # stays revoked after reactivation
        assert authenticate_token(other.secret) is not None
