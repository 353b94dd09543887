"""Personal access tokens for the JSON API (services/api_tokens.py owns their rules), and the API's
idempotent requests (services/idempotency.py)."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import db
from app.models.base import created_at_column

TOKEN_SCOPES = ("read", "write")


class ApiToken(db.Model):
    """One token of one account: only its SHA-256 is stored; the secret is shown once, when it is made."""

    __tablename__ = "api_tokens"
    __table_args__ = (CheckConstraint("scope IN ('read','write')", name="scope"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(80), default="")
    # A high-entropy random secret needs no slow hash: SHA-256 cannot be reversed, and it is looked up by value.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))  # the secret's first characters, to tell tokens apart
    scope: Mapped[str] = mapped_column(String(10))
    created_at: Mapped[datetime] = created_at_column()
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    user = relationship("User", lazy="joined")


class IdempotentRequest(db.Model):
    """A creating API request sent with an Idempotency-Key: the answer its first success gave, replayed to a retry
    (services/idempotency.py owns the rule). `status` is null while the first request runs."""

    __tablename__ = "idempotent_requests"
    __table_args__ = (UniqueConstraint("user_id", "key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    key: Mapped[str] = mapped_column(String(255))
    fingerprint: Mapped[str] = mapped_column(String(64))  # SHA-256 of the method, path and the request's content
    status: Mapped[int | None] = mapped_column(Integer)
    body: Mapped[str] = mapped_column(Text, default="")
    location: Mapped[str] = mapped_column(String(500), default="")
    created_at: Mapped[datetime] = created_at_column()
