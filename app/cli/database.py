"""Helpers shared by CLI commands."""
from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from flask import current_app
from sqlalchemy import column, func, select, table
from sqlalchemy.exc import DBAPIError

# A migration file's own id and the ids it revises (one, a tuple of several, or None).
_REVISION_LINE = re.compile(r"^revision(?:\s*:\s*[\w\[\], |]+)?\s*=\s*['\"](\w+)['\"]", re.MULTILINE)
_REVISES_LINE = re.compile(r"^down_revision(?:\s*:\s*[\w\[\], |]+)?\s*=\s*(.+)$", re.MULTILINE)
_QUOTED_ID = re.compile(r"['\"](\w+)['\"]")


def migration_heads(directory: str | Path) -> frozenset[str]:
    """The newest migrations (those no other revises), read from the files' `revision =` lines.

    Alembic finds the same by importing every migration module; reading the lines costs a few
    milliseconds, which matters to a command that runs in a health check. A test holds the two equal.
    """
    revisions: set[str] = set()
    revised: set[str] = set()
    for path in Path(directory, "versions").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        own = _REVISION_LINE.search(text)
        if own is None:
            continue
        revisions.add(own.group(1))
        revises = _REVISES_LINE.search(text)
        if revises is not None:
            revised.update(_QUOTED_ID.findall(revises.group(1)))
    return frozenset(revisions - revised)


def _applied_revisions() -> frozenset[str]:
    """The revisions the database says it is at (empty for a new database)."""
    from app.extensions import db

    version_table = table("alembic_version", column("version_num"))
    try:
        with db.engine.connect() as connection:
            return frozenset(connection.scalars(select(version_table.c.version_num)))
    except DBAPIError:  # no alembic_version table yet: a new database
        return frozenset()


def upgrade_database() -> None:
    """Bring the schema to the newest migration, quietly; a database already there costs one query, not Alembic."""
    directory = current_app.extensions["migrate"].directory
    heads = migration_heads(directory)
    if heads and _applied_revisions() == heads:
        return
    from flask_migrate import upgrade

    logging.getLogger("alembic").setLevel(logging.WARNING)
    upgrade(directory=directory)


def open_database() -> None:
    """Upgrade the schema and check the file; a damaged or unreachable database stops the start in one line."""
    from app.extensions import db
    from app.services.health import integrity_problem

    try:
        upgrade_database()
        problem = integrity_problem()
    except (DBAPIError, OSError) as exc:
        problem = " ".join(str(getattr(exc, "orig", None) or exc).split())[:300]
    if problem:
        where = db.engine.url.render_as_string(hide_password=True)
        raise click.ClickException(
            f"cannot start: the database {where} is damaged or unreadable ({problem}). "
            "Restore it from a backup, or move it away to start with an empty one.")


STARTUP_LOCK_KEY = 0x4C4556414C  # "LEVAL": one advisory lock key for every start on the database


@contextmanager
def startup_lock() -> Iterator[None]:
    """Hold the database's start-up lock (PostgreSQL advisory lock): one process migrates and bootstraps at a time.

    SQLite needs none: one machine, and its writes already take turns.
    """
    from app.extensions import db

    if db.engine.dialect.name != "postgresql":
        yield
        return
    try:
        connection = db.engine.connect()
        connection.execute(select(func.pg_advisory_lock(STARTUP_LOCK_KEY)))
        connection.commit()
    except DBAPIError:  # unreachable: open_database says so in one line
        yield
        return
    try:
        yield
    finally:
        connection.execute(select(func.pg_advisory_unlock(STARTUP_LOCK_KEY)))
        connection.commit()
        connection.close()


class DbId(click.ParamType):
    """An id argument: ASCII digits an id column holds (click's int reads '٣' as 3 and passes 2^64 on to the
    database); read by models.ids.parse_db_id, as the pages and the API read ids."""

    name = "id"

    def convert(self, value, param, ctx) -> int:
        from app.models.ids import parse_db_id

        number = value if isinstance(value, int) and not isinstance(value, bool) else parse_db_id(str(value))
        if number is None:
            self.fail(f"{value!r} is not an id (a whole number in the digits 0-9)", param, ctx)
        return number


DB_ID = DbId()
