"""The stored calls of every LLM feature (judge, rater, generation): rows keyed by a content address.

One owner for how such rows are looked up in bulk, written without losing a race to another job, and
committed as each result lands (a run killed at any point resumes without repeating a stored call):
- `rows_by_key` reads many keys in chunks well under every database's parameter limit;
- `record` inserts the row of a key or updates it, and never replaces a success by an error;
- `commit_each` wraps a run's per-result callback so that every result is committed as it lands.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app.extensions import db

Row = TypeVar("Row")
Result = TypeVar("Result")
IN_CHUNK = 500  # keys per IN (...) query


def rows_by_key(model: type[Row], keys: Iterable[str]) -> dict[str, Row]:
    """The stored rows of these content addresses."""
    keys = list(dict.fromkeys(keys))
    found: dict[str, Row] = {}
    for start in range(0, len(keys), IN_CHUNK):
        chunk = keys[start:start + IN_CHUNK]
        for row in db.session.scalars(select(model).where(model.cache_key.in_(chunk))):
            found[row.cache_key] = row
    return found


def row_of(model: type[Row], key: str) -> Row | None:
    return db.session.scalars(select(model).where(model.cache_key == key)).first()


def record(model: type[Row], key: str, *, ok: bool, new_row: Callable[[], Row], fill: Callable[[Row], None],
           succeeded: Callable[[Row], bool]) -> None:
    """Store a result under its key (the caller commits): insert, or update unless that would put an error
    over a success. Another job storing the same content at the same moment is not an error."""
    row = row_of(model, key)
    if row is None:
        row = new_row()
        fill(row)
        try:
            with db.session.begin_nested():
                db.session.add(row)
            return
        except IntegrityError:  # another job stored the same content a moment ago
            row = row_of(model, key)
    if succeeded(row) and not ok:
        return
    fill(row)
    db.session.flush()


def insert_once(model: type[Row], row: Row) -> Row:
    """Store a success at once (committed); when another run stored the same content meanwhile, return its row."""
    db.session.add(row)
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        row = db.session.scalars(select(model).where(model.cache_key == row.cache_key)).one()
    return row


def commit_each(record_error: Callable[[Any], None],
                on_progress: Callable[[int, Any], None] | None = None) -> Callable[[Any], None]:
    """A runner's on_result callback: keep failures as error rows, report progress, commit each result."""
    done = 0

    def on_result(result: Any) -> None:
        nonlocal done
        if not result.ok:
            record_error(result)
        done += 1
        if on_progress is not None:
            on_progress(done, result)
        db.session.commit()

    return on_result
