"""Sign-in throttling shared by every server process: attempts per username and per address, in the database.

A username gets few attempts (a guessed password); an address many more, since a whole lab may sign
in from one address (behind NAT, or a proxy: see LEVAL_TRUSTED_PROXIES), and one annotator
mistyping must not lock the others out.

Interface (used by the sign-in view; any process on the same database shares the counts):

    limiter = LoginLimiter(limit=10, address_limit=100, window_seconds=60)
    wait = limiter.acquire(address_key(ip), user_key(name))  # 0.0: go ahead, one attempt counted per key
    ...                                                       # else: seconds to wait; nothing was counted
    limiter.succeeded(address_key(ip), user_key(name))        # a right password: it was not a failure

An attempt is counted before the password is checked, with one atomic UPDATE per key
(`count < limit` in its WHERE), so parallel requests cannot run more than `limit` checks per
key and window; a successful sign-in gives the attempt back. Keys are hashes (fixed length,
no user text stored). Each key has a fixed window that starts at its first attempt; expired
rows are deleted whenever a new key is stored, so the table holds at most the keys tried in
the last window. Works on SQLite and PostgreSQL alike.
"""
from __future__ import annotations

import hashlib
import math
import time

from sqlalchemy import case, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from app.extensions import db
from app.models import LoginAttempt

DEFAULT_LIMIT = 10  # per username
DEFAULT_ADDRESS_LIMIT = 100  # per client address
DEFAULT_WINDOW_SECONDS = 60.0
_ADDRESS_KIND = "ip"
_TOKEN_KIND = "token"
_PLAIN = {"synchronize_session": False}  # bulk statements: no ORM objects of this table are ever loaded


def _key(kind: str, value: str) -> str:
    return f"{kind}:{hashlib.sha256(value.encode('utf-8', 'surrogatepass')).hexdigest()[:64]}"


def user_key(username: str) -> str:
    """The key of a username (case-insensitive)."""
    return _key("user", username.strip().casefold())


def address_key(address: str | None) -> str:
    """The key of a client address."""
    return _key(_ADDRESS_KIND, address or "unknown")


def token_key(token_id: int) -> str:
    """The key of an API token that ended: its failed uses are counted apart from its address's."""
    return _key(_TOKEN_KIND, str(token_id))


class LoginLimiter:
    """At most `limit` sign-in attempts per username and `address_limit` per address and window, counted
    atomically in the database."""

    def __init__(self, limit: int = DEFAULT_LIMIT, window_seconds: float = DEFAULT_WINDOW_SECONDS, *,
                 address_limit: int = DEFAULT_ADDRESS_LIMIT):
        self.limit = int(limit)
        self.address_limit = int(address_limit)
        self.window = float(window_seconds)

    def limit_of(self, key: str) -> int:
        """The attempts a key gets per window: an address's (and an ended API token's, as many) or a username's."""
        return self.address_limit if key.startswith((f"{_ADDRESS_KIND}:", f"{_TOKEN_KIND}:")) else self.limit

    def acquire(self, *keys: str) -> float:
        """Count one attempt on every key, in order; if one is full, count none and return seconds to wait."""
        taken: list[str] = []
        for key in keys:
            wait = self._take(key)
            if wait:
                for done in taken:
                    self._give_back(done)
                return wait
            taken.append(key)
        return 0.0

    def succeeded(self, address: str, user: str) -> None:
        """The password was right: the user's count starts over and the address gets its attempt back."""
        db.session.execute(delete(LoginAttempt).where(LoginAttempt.key == user), execution_options=_PLAIN)
        db.session.commit()
        self._give_back(address)

    def count(self, key: str) -> int:
        """Attempts counted for a key in its current window (for tests and the admin)."""
        return self.usage(key)[0]

    def usage(self, key: str) -> tuple[int, float]:
        """(attempts counted in the key's current window, seconds until that window ends; 0 without one)."""
        row = db.session.execute(select(LoginAttempt.count, LoginAttempt.window_start)
                                 .where(LoginAttempt.key == key)).first()
        db.session.commit()
        now = time.time()
        if row is None or row.window_start <= now - self.window:
            return 0, 0.0
        return row.count, max(0.0, row.window_start + self.window - now)

    # -- one key ---------------------------------------------------------------------------

    def _take(self, key: str) -> float:
        if self.limit_of(key) <= 0:
            return self.window
        now = time.time()
        cutoff = now - self.window
        if self._update(key, now, cutoff):
            return 0.0
        try:
            db.session.execute(delete(LoginAttempt).where(LoginAttempt.window_start <= cutoff), execution_options=_PLAIN)
            db.session.execute(insert(LoginAttempt).values(key=key, window_start=now, count=1))
            db.session.commit()
            return 0.0
        except IntegrityError:  # the key exists (full), or another process inserted it just now
            db.session.rollback()
        if self._update(key, now, cutoff):
            return 0.0
        started = db.session.scalar(select(LoginAttempt.window_start).where(LoginAttempt.key == key))
        db.session.commit()
        if started is None:  # deleted as expired by another process meanwhile: a new window
            return self._take(key)
        return max(1.0, math.ceil(started + self.window - now))

    def _update(self, key: str, now: float, cutoff: float) -> bool:
        """One attempt more on a stored key, in one statement: a new window if the old one ended, none if full."""
        expired = LoginAttempt.window_start <= cutoff
        result = db.session.execute(
            update(LoginAttempt)
            .where(LoginAttempt.key == key, expired | (LoginAttempt.count < self.limit_of(key)))
            .values(count=case((expired, 1), else_=LoginAttempt.count + 1),
                    window_start=case((expired, now), else_=LoginAttempt.window_start)),
            execution_options=_PLAIN,
        )
        db.session.commit()
        return result.rowcount == 1

    def _give_back(self, key: str) -> None:
        db.session.execute(update(LoginAttempt).where(LoginAttempt.key == key, LoginAttempt.count > 0)
                           .values(count=LoginAttempt.count - 1), execution_options=_PLAIN)
        db.session.commit()
