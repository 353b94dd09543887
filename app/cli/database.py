"""Helpers shared by CLI commands."""
from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import click
from flask import current_app
from flask_migrate import upgrade
from sqlalchemy import func, select
from sqlalchemy.exc import DBAPIError


def upgrade_database() -> None:
    """Bring the schema to the newest migration, quietly."""
    logging.getLogger("alembic").setLevel(logging.WARNING)
    upgrade(directory=current_app.extensions["migrate"].directory)


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
