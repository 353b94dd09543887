"""Account management shared by the CLI and the admin pages."""
from __future__ import annotations

import re
import secrets
from functools import lru_cache

from sqlalchemy import func, or_, select, update
from werkzeug.security import check_password_hash, generate_password_hash

from app.extensions import db
from app.models import Setting, User
from app.models.base import utcnow
from app.models.users import PASSWORD_METHOD, ROLES
from app.services.api_tokens import revoke_all

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
    check_new_password(password)
    if db.session.scalar(select(User.id).where(func.lower(User.username) == username.lower())):
        raise AccountError(f"User '{username}' already exists.")
    user = User(username=username, role=role, active=active)
    user.set_password(password)
    db.session.add(user)
    db.session.commit()
    return user


def check_new_password(password: str) -> None:
    """The rule every chosen password meets (created, or changed by its owner)."""
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"Password must have at least {MIN_PASSWORD} characters.")


def generate_password() -> str:
    """Return a random password that is easy to copy from a console."""
    return secrets.token_urlsafe(12)


def find_user(username: str) -> User | None:
    return db.session.scalars(select(User).where(User.username == username)).first()


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    """A hash of a random password with the real method and cost: checked when the username is unknown."""
    return generate_password_hash(secrets.token_urlsafe(16), method=PASSWORD_METHOD)


def prepare_sign_in() -> None:
    """Make the dummy hash before the first sign-in, so that the first unknown name is not the slowest."""
    _dummy_hash()


def authenticate(username: str, password: str) -> User | None:
    """The account if the password is right, else None; an unknown name costs the same password check.

    Without the dummy check a wrong password would answer in ~12 ms for an unknown name and in the
    time of a scrypt check for a known one, telling which usernames exist.
    """
    user = find_user(username)
    if user is None:
        check_password_hash(_dummy_hash(), password)
        return None
    return user if user.check_password(password) else None


def record_sign_in(user: User) -> None:
    user.last_login_at = utcnow()
    db.session.commit()


def end_sessions(user: User) -> None:
    """End every open session of the account (every browser, every copied cookie)."""
    db.session.execute(update(User).where(User.id == user.id).values(session_version=User.session_version + 1),
                       execution_options={"synchronize_session": False})
    db.session.commit()
    db.session.refresh(user)


def sign_out_everywhere(user: User) -> None:
    """End every session of the account and revoke every API token it made, in one transaction.

    Plain sign-out (end_sessions) keeps the tokens: a script on a cluster must not stop because its
    owner signed out of a browser; this is the "I may be compromised" button.
    """
    revoke_all(user.id)
    end_sessions(user)


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
    user = create_user(username, password, "admin")
    _note_shown_once(user, True)
    db.session.commit()
    return user, password


def list_users() -> list[User]:
    return list(db.session.scalars(select(User).order_by(User.username)))


def set_active(user: User, active: bool, *, by: User) -> None:
    """Deactivate or reactivate an account; an admin cannot lock out themselves or the last admin.

    Deactivating is one conditional UPDATE whose WHERE counts the other active admins, after
    locking the active admin rows (PostgreSQL; SQLite runs one writer at a time): two admins
    deactivating each other at once cannot both succeed. It also ends the account's sessions and
    revokes its API tokens (they stay revoked if the account is reactivated).
    """
    if active:
        user.active = True
        db.session.commit()
        return
    if user.id == by.id:
        raise AccountError("You cannot deactivate your own account.")
    db.session.execute(select(User.id).where(User.role == "admin", User.active.is_(True)).with_for_update())
    other_admins = (select(func.count(User.id)).where(User.role == "admin", User.active.is_(True), User.id != user.id)
                    .scalar_subquery())
    changed = db.session.execute(
        update(User).where(User.id == user.id, or_(User.role != "admin", other_admins > 0))
        .values(active=False, session_version=User.session_version + 1),
        execution_options={"synchronize_session": False},
    ).rowcount
    if not changed:
        db.session.rollback()
        raise AccountError("This is the last active admin account; it cannot be deactivated.")
    revoke_all(user.id)
    db.session.commit()
    db.session.refresh(user)


def reset_password(user: User) -> str:
    """Give the account a new random password and return it (it is shown once, never stored).

    A reset is how a lab takes back a stolen account: its sessions and its API tokens end with it.
    """
    password = generate_password()
    _note_shown_once(user, True)
    _replace_password(user, password, end_tokens=True)
    return password


SHOWN_ONCE_KEY = "password-shown-once:{}"  # a Setting: the account's password is one printed or shown once


def _note_shown_once(user: User, shown: bool) -> None:
    """Remember (in the session's transaction) whether the account still has a password that was printed on
    the console or shown to an admin, which its owner should replace (the overview says so)."""
    key = SHOWN_ONCE_KEY.format(user.id)
    found = db.session.get(Setting, key)
    if shown and found is None:
        db.session.add(Setting(key=key, value="1"))
    elif not shown and found is not None:
        db.session.delete(found)


def has_shown_once_password(user_id: int) -> bool:
    """Whether the account's password is still one printed at the first start or shown once after a reset."""
    return db.session.get(Setting, SHOWN_ONCE_KEY.format(user_id)) is not None


def change_password(user: User, current: str, new: str, *, end_tokens: bool = True) -> int:
    """The account's owner changes its password, proving the current one; every session of it ends, and unless
    `end_tokens` is False (the owner keeps their scripts running) every API token too. Returns the tokens revoked.

    Raises AccountError when the current password is wrong or the new one breaks the rule. The
    caller keeps the owner's own browser signed in (web.sessions.renew) and counts the attempt as
    a sign-in attempt, since it checks the same secret.
    """
    if not user.check_password(current):
        raise AccountError("Your current password is not right; nothing was changed.")
    check_new_password(new)
    if new == current:
        raise AccountError("The new password is the one you have now; choose another.")
    _note_shown_once(user, False)
    return _replace_password(user, new, end_tokens=end_tokens)


def _replace_password(user: User, password: str, *, end_tokens: bool) -> int:
    """The one way an existing account's password is replaced: every session ends (User.set_password raises the
    session version) and, with `end_tokens`, every API token is revoked, in one transaction. Returns the tokens
    revoked."""
    user.set_password(password)
    revoked = revoke_all(user.id) if end_tokens else 0
    db.session.commit()
    return revoked


def ids_of_usernames(names: list[str]) -> list[int]:
    """The accounts' ids, in the order given; raise AccountError naming every unknown username."""
    found = dict(db.session.execute(select(User.username, User.id).where(User.username.in_(names))).all())
    unknown = [name for name in names if name not in found]
    if unknown:
        raise AccountError(f"no account named {', '.join(repr(name) for name in unknown[:10])}")
    return [found[name] for name in dict.fromkeys(names)]
