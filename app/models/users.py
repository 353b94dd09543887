"""Accounts and key/value settings."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, CheckConstraint, DateTime, Float, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column
from werkzeug.security import check_password_hash, generate_password_hash

from app.extensions import db
from app.models.base import created_at_column, utcnow

ROLES = ("admin", "researcher", "annotator")
STAFF_ROLES = ("admin", "researcher")
# scrypt is werkzeug's slow, memory-hard default; named here so the choice is explicit.
PASSWORD_METHOD = "scrypt"


class User(db.Model):
    __tablename__ = "users"
    __table_args__ = (CheckConstraint("role IN ('admin','researcher','annotator')", name="role"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(80), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(20), default="annotator")
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = created_at_column()
    last_login_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Part of every session's user id: raising it ends every session of the account (sign-out everywhere,
    # a password change or reset, deactivation). See get_id and app.web.security.load_user.
    session_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    def set_password(self, password: str) -> None:
        """Set a new password; every open session of the account ends with the old one."""
        self.password_hash = generate_password_hash(password, method=PASSWORD_METHOD)
        if self.id is not None:
            self.session_version = (self.session_version or 0) + 1

    def get_id(self) -> str:
        """The session's user id: `<id>.<session version>`, so a raised version invalidates old cookies."""
        return f"{self.id}.{self.session_version or 0}"

    def check_password(self, password: str) -> bool:
        return check_password_hash(self.password_hash, password)

    # What Flask-Login asks of a user (its UserMixin, written here so that commands start without the
    # sign-in machinery): a stored account is signed in, never anonymous, active unless deactivated.
    is_authenticated = True
    is_anonymous = False

    @property
    def is_active(self) -> bool:  # Flask-Login refuses inactive accounts.
        return bool(self.active)

    def __eq__(self, other: object) -> bool:  # as UserMixin: the same account and session version
        return isinstance(other, User) and self.get_id() == other.get_id()

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    @property
    def is_staff(self) -> bool:
        return self.role in STAFF_ROLES


class Setting(db.Model):
    """Small key/value settings edited in the UI (judge endpoint, prices…)."""

    __tablename__ = "settings"

    key: Mapped[str] = mapped_column(String(80), primary_key=True)
    value: Mapped[str] = mapped_column(Text, default="")
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class LoginAttempt(db.Model):
    """Sign-in attempts of one key (a hashed username or address) in the current window, shared by all processes."""

    __tablename__ = "login_attempts"

    key: Mapped[str] = mapped_column(String(80), primary_key=True)
    window_start: Mapped[float] = mapped_column(Float, index=True)  # seconds since the epoch
    count: Mapped[int] = mapped_column(Integer, default=0)
