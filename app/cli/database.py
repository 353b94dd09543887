"""Helpers shared by CLI commands."""
from __future__ import annotations

import logging

import click
from flask import current_app
from flask_migrate import upgrade
from sqlalchemy.exc import DBAPIError


def upgrade_database() -> None:
    """Bring the schema to the newest migration, quietly."""
    logging.getLogger("alembic").setLevel(logging.WARNING)
    upgrade(directory=current_app.extensions["migrate"].directory)


def open_database() -> None:
    """Upgrade the schema and check the file; a damaged or unreachable database stops the start in one line."""
    from ..extensions import db
    from ..services.health import integrity_problem

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
