"""Account management shared by the CLI and the admin pages."""
from __future__ import annotations

import re
import secrets

from sqlalchemy import func, select

from ..extensions import db
from ..models import User
from ..models.users import ROLES

USERNAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{2,80}$")
MIN_PASSWORD = 8


class AccountError(ValueError):
    """A request to create or change an account that cannot be honoured."""


def create_user(username: str, password: str, role: str, *, active: bool = True) -> User:
    """Create an account with a hashed password; raise AccountError on bad input."""
    username = username.strip()
    if not USERNAME_RE.match(username):
        raise AccountError("Username must be 2–80 letters, digits, '.', '_' or '-'.")
    if role not in ROLES:
        raise AccountError(f"Role must be one of: {', '.join(ROLES)}.")
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"Password must have at least {MIN_PASSWORD} characters.")
    if db.session.scalar(select(User.id).where(func.lower(User.username) == username.lower())):
        raise AccountError(f"User '{username}' already exists.")
    user = User(username=username, role=role, active=active)
    user.set_password(password)
    db.session.add(user)
    db.session.commit()
    return user


def generate_password() -> str:
    """Return a random password that is easy to copy from a console."""
    return secrets.token_urlsafe(12)


def find_user(username: str) -> User | None:
    return db.session.scalars(select(User).where(User.username == username)).first()


def ensure_admin() -> tuple[User, str] | None:
    """Create the first admin if none exists; return it with its one-time password."""
    if db.session.scalar(select(User.id).where(User.role == "admin").limit(1)):
        return None
    username = "admin"
    suffix = 1
    while find_user(username):
        suffix += 1
        username = f"admin{suffix}"
    password = generate_password()
    return create_user(username, password, "admin"), password


def list_users() -> list[User]:
    return list(db.session.scalars(select(User).order_by(User.username)))


def set_active(user: User, active: bool, *, by: User) -> None:
    """Deactivate or reactivate an account; an admin cannot lock out themselves or the last admin."""
    if not active and user.id == by.id:
        raise AccountError("You cannot deactivate your own account.")
    if not active and user.role == "admin":
        others = db.session.scalar(
            select(func.count(User.id)).where(User.role == "admin", User.active.is_(True), User.id != user.id)
        )
        if not others:
            raise AccountError("This is the last active admin account; it cannot be deactivated.")
    user.active = active
    db.session.commit()


def reset_password(user: User) -> str:
    """Give the account a new random password and return it (it is shown once, never stored)."""
    password = generate_password()
    user.set_password(password)
    db.session.commit()
    return password
