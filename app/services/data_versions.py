"""Which tables changed: every commit that writes a table bumps its counter in data_versions.

The bump runs in the committing transaction, so a reader in any process sees the new version
exactly when it sees the new data. It covers ORM flushes and insert/update/delete statements
run through the session (in place updates included). Updates of job rows (progress, heartbeats)
are left out: pages read which jobs exist, never their progress.

A table's counter is spread over SHARDS rows ("scores#3"), and its version is their sum. A bump
locks its row until the commit ends (on PostgreSQL, after the commit's flush to disk): with one
row per table, every concurrent save waited for the one before it.

Only what can change an analysis counts:
- bookkeeping never does: an update that changes only BOOKKEEPING columns (a token's last use, an
  account's last sign-in) bumps nothing, nor do writes to UNTRACKED tables (sign-in throttling, the
  score history, the references check's memo);
- a write that belongs to one study bumps that study's counter ("scores@12#3"): a save through the
  question page (note_written(..., study_id=)), and ORM writes to a table with a study_id column.
  versions_for(study_id) leaves other studies' counters out, so a save in one study leaves every
  other study's cached analyses valid. A write whose study is unknown (an import, a cascade) bumps
  the table's own counter, which every study's versions include.
"""
from __future__ import annotations

import random
from collections import Counter

from sqlalchemy import bindparam, event, inspect, select
from sqlalchemy.orm import ORMExecuteState, Session, UOWTransaction

from app.extensions import db

# Tables no cached page derives anything from: the history of each score, who saw which order, and
# the stored answers of the references check (a memo: storing one changes no answer). Leaving them
# out keeps a save to one counter bump.
UNTRACKED = frozenset({"data_versions", "score_revisions", "question_views", "text_repeats", "login_attempts"})
UPDATES_UNTRACKED = frozenset({"jobs"})
# Columns whose update alone is bookkeeping: no page's analysis reads them.
BOOKKEEPING = {"users": frozenset({"last_login_at"}), "api_tokens": frozenset({"last_used_at"})}
_TOUCHED = "leval_touched_tables"
SHARDS = 16
SHARD_MARK = "#"
STUDY_MARK = "@"


def _remember(session: Session, table_names) -> None:
    names = {name for name in table_names if name and name.partition(STUDY_MARK)[0] not in UNTRACKED}
    if names:
        session.info.setdefault(_TOUCHED, set()).update(names)


def note_written(*table_names: str, study_id: int | None = None) -> None:
    """Count tables written by statements on the session's connection, which the session's events do not see;
    with study_id, as written for that study alone."""
    _remember(db.session(), [_scoped(name, study_id) for name in table_names])


def _scoped(name: str | None, study_id: int | None) -> str | None:
    return f"{name}{STUDY_MARK}{study_id}" if name and isinstance(study_id, int) else name


def _counter_name(obj) -> str | None:
    """The counter an ORM row's write bumps: its table's, or its study's share of it when the row names a study."""
    table = getattr(obj, "__table__", None)
    if table is None:
        return None
    return _scoped(table.name, getattr(obj, "study_id", None) if "study_id" in table.c else None)


def _changes_an_analysis(obj) -> bool:
    """An updated row counts unless only bookkeeping columns changed."""
    table = getattr(obj, "__table__", None)
    quiet = BOOKKEEPING.get(getattr(table, "name", None))
    if not quiet:
        return True
    state = inspect(obj)
    return any(attr.key not in quiet and attr.history.has_changes() for attr in state.attrs)


def _after_flush(session: Session, flush_context: UOWTransaction) -> None:
    updated = [obj for obj in session.dirty if session.is_modified(obj) and _changes_an_analysis(obj)]
    _remember(session, [*(_counter_name(obj) for obj in (*session.new, *session.deleted)),
                        *(_counter_name(obj) for obj in updated if obj.__table__.name not in UPDATES_UNTRACKED)])


def _on_execute(state: ORMExecuteState) -> None:
    if state.is_insert or state.is_update or state.is_delete:
        name = getattr(getattr(state.statement, "table", None), "name", None)
        if not (state.is_update and name in UPDATES_UNTRACKED):
            _remember(state.session, [name])


_BUMPS: dict[str, object] = {}


def _bump_statement(dialect: str):
    """The upsert that adds one to a table's counter, built once per dialect (saves are the hot path)."""
    if dialect not in _BUMPS:
        from app.models import DataVersion

        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        statement = insert(DataVersion).values(table_name=bindparam("name"), version=1)
        _BUMPS[dialect] = statement.on_conflict_do_update(
            index_elements=[DataVersion.table_name], set_={"version": DataVersion.version + 1}
        )
    return _BUMPS[dialect]


def _before_commit(session: Session) -> None:
    if session.new or session.dirty or session.deleted:
        session.flush()  # commit flushes after this event; flush first so those writes count too
    names = session.info.pop(_TOUCHED, ())
    if not names:
        return
    # A row of each table's counter at random; rows in name order, so that concurrent commits lock
    # counters in the same order. Core execution: the ORM's statement handling costs more than the
    # upsert itself.
    rows = sorted(f"{name}{SHARD_MARK}{random.randrange(SHARDS)}" for name in names)
    connection = session.connection()
    statement = _bump_statement(connection.dialect.name)
    for row in rows:
        connection.execute(statement, {"name": row})


def _forget(session: Session, transaction) -> None:
    if transaction.parent is None:  # the outermost transaction ended: rolled back, or committed and bumped
        session.info.pop(_TOUCHED, None)


_installed = False


def track_changes() -> None:
    """Install the listeners on the app's session class (once per process)."""
    global _installed
    if _installed:
        return
    session_class = db.session.session_factory.class_
    event.listen(session_class, "after_flush", _after_flush)
    event.listen(session_class, "do_orm_execute", _on_execute)
    event.listen(session_class, "before_commit", _before_commit)
    event.listen(session_class, "after_transaction_end", _forget)
    _installed = True


def current_versions() -> tuple[tuple[str, int], ...]:
    """Every counter (a table's, or a table's for one study: "scores@12"), each the sum of its rows, in one query."""
    from app.models import DataVersion

    totals: Counter[str] = Counter()
    for row, version in db.session.execute(select(DataVersion.table_name, DataVersion.version)):
        totals[row.partition(SHARD_MARK)[0]] += version  # rows from before shards have no mark
    return tuple(sorted(totals.items()))


EVERY_STUDY = "every study"  # what reads (or may read) any study's rows
NO_STUDY = "no study"  # what reads no row that belongs to a study


def versions_for(versions: tuple[tuple[str, int], ...], study, *, scores: bool = True) -> tuple[tuple[str, int], ...]:
    """The counters that can change what reads one study (its id), every study, or none of them; without the
    scores' counters for what reads no human score (a study's metric values), so that a save leaves it valid."""
    mine = None if study == NO_STUDY else f"{STUDY_MARK}{study}"
    return tuple((name, version) for name, version in versions
                 if (study == EVERY_STUDY or STUDY_MARK not in name or (mine is not None and name.endswith(mine)))
                 and (scores or name.partition(STUDY_MARK)[0] != "scores"))
