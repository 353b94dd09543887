"""Personal access tokens for the JSON API (services/api_tokens.py owns their rules)."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, DateTime, ForeignKey, String
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
