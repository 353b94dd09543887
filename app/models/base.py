"""Shared column helpers."""
from datetime import datetime, timezone

from sqlalchemy import DateTime
from sqlalchemy.orm import mapped_column


def utcnow() -> datetime:
    """Return the current time, timezone-aware in UTC."""
    return datetime.now(timezone.utc)


def created_at_column():
    """Return a non-null creation timestamp column."""
    return mapped_column(DateTime(timezone=True), default=utcnow, nullable=False)


def as_utc(moment: datetime) -> datetime:
    """A stored time, timezone-aware: SQLite returns naive datetimes for timezone-aware columns (stored in UTC)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
