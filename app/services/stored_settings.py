"""The Setting table's rows, read and written by prefix: the one place that knows a setting is a key/value row.

The judge's settings, the LLM endpoints and the price table each own their keys under a prefix
("judge.", "endpoint.<name>."); they read and stage them here, and their callers commit.
"""
from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select

from app.extensions import db
from app.models import Setting


def read(prefix: str, names: Iterable[str]) -> dict[str, str]:
    """The saved values of these names under the prefix (names never saved are absent)."""
    rows = db.session.scalars(select(Setting).where(Setting.key.in_([prefix + name for name in names])))
    return {row.key[len(prefix):]: row.value for row in rows}


def stage(prefix: str, values: dict[str, str]) -> None:
    """Put these values in the session, inserting or updating each row (the caller commits)."""
    for name, value in values.items():
        setting = db.session.get(Setting, prefix + name)
        if setting is None:
            db.session.add(Setting(key=prefix + name, value=value))
        else:
            setting.value = value


def names_under(prefix: str, suffix: str) -> list[str]:
    """The middle parts of saved keys `<prefix><middle><suffix>` with a value (e.g. the named endpoints)."""
    keys = db.session.scalars(select(Setting.key).where(Setting.key.like(f"{prefix}%{suffix}"), Setting.value != ""))
    return sorted(key[len(prefix):len(key) - len(suffix)] for key in keys)
