"""Idempotency-Key on the API's creating requests: a retry gets the first answer, never a second upload or study.

The IETF's Idempotency-Key header, per account: the first request with a key is recorded (running) before
it runs and, when it succeeds (2xx), its answer is kept for a day. The same key with the same request then
answers that answer again; with another request it is refused (the key names one request); while the first
still runs, a retry is told to wait. A request that fails leaves no record: nothing was made, so a retry
runs again. Records older than a day are deleted when the account next uses a key.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from app.extensions import db
from app.models import IdempotentRequest
from app.models.base import utcnow

KEEP = timedelta(hours=24)
MAX_KEY = 255


class KeyRefused(ValueError):
    """The key cannot be used for this request: `status` 422 (another request's key, or not a key) or 409 (the
    first request with it still runs)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Replay:
    status: int
    body: str
    location: str


def fingerprint(method: str, path: str, parts: list[tuple[str, bytes]]) -> str:
    """The request as a key names it: method, path and its content (named parts, in a canonical order)."""
    digest = hashlib.sha256(f"{method} {path}".encode())
    for name, value in sorted(parts):
        digest.update(b"\0" + name.encode("utf-8", "surrogatepass") + b"\0" + hashlib.sha256(value).digest())
    return digest.hexdigest()


def check_key(key: str) -> None:
    if not 1 <= len(key) <= MAX_KEY or not key.isascii() or not key.isprintable():
        raise KeyRefused(422, f"an Idempotency-Key is 1 to {MAX_KEY} printable ASCII characters")


def begin(user_id: int, key: str, print_: str) -> Replay | int:
    """Record the request (its id, to `finish` or `forget`), or the earlier answer to replay; KeyRefused else."""
    check_key(key)
    cutoff = utcnow() - KEEP
    db.session.execute(delete(IdempotentRequest).where(IdempotentRequest.user_id == user_id,
                                                       IdempotentRequest.created_at < cutoff))
    record = IdempotentRequest(user_id=user_id, key=key, fingerprint=print_, status=None, body="", location="")
    db.session.add(record)
    try:
        db.session.commit()
        return record.id
    except IntegrityError:
        db.session.rollback()
    earlier = db.session.scalars(select(IdempotentRequest).where(IdempotentRequest.user_id == user_id,
                                                                 IdempotentRequest.key == key)).first()
    if earlier is None:  # a record that had expired was deleted meanwhile: this request is the first again
        return begin(user_id, key, print_)
    if earlier.fingerprint != print_:
        raise KeyRefused(422, "this Idempotency-Key was used for another request: use a new key for a new request")
    if earlier.status is None:
        raise KeyRefused(409, "the first request with this Idempotency-Key is still running: retry in a moment")
    return Replay(earlier.status, earlier.body, earlier.location)


def finish(record_id: int, status: int, body: str, location: str) -> None:
    """Keep the answer of a request that succeeded."""
    db.session.rollback()
    db.session.execute(update(IdempotentRequest).where(IdempotentRequest.id == record_id)
                       .values(status=status, body=body, location=location[:500]))
    db.session.commit()


def forget(record_id: int) -> None:
    """A request that failed made nothing: its retry runs again."""
    db.session.rollback()
    db.session.execute(delete(IdempotentRequest).where(IdempotentRequest.id == record_id))
    db.session.commit()
