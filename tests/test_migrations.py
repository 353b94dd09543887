"""The migration chain builds the schema from nothing, and matches the models exactly."""
from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask_migrate import downgrade, upgrade
from sqlalchemy import inspect

from app import create_app
from app.extensions import db


def make_app(tmp_path):
    return create_app({"INSTANCE_PATH": tmp_path / "instance", "TESTING": True})


def test_upgrade_from_empty_matches_models(tmp_path):
    app = make_app(tmp_path)
    with app.app_context():
        upgrade()
        tables = set(inspect(db.engine).get_table_names())
        assert set(db.metadata.tables) <= tables
        with db.engine.connect() as connection:
            diff = compare_metadata(MigrationContext.configure(connection, opts={"render_as_batch": True}), db.metadata)
        assert diff == [], f"models and migrations differ: {diff}"
        db.engine.dispose()


def test_downgrade_to_base_and_up_again(tmp_path):
    app = make_app(tmp_path)
    with app.app_context():
        upgrade()
        downgrade(revision="base")
        assert set(inspect(db.engine).get_table_names()) <= {"alembic_version"}
        upgrade()
        assert "scores" in inspect(db.engine).get_table_names()
        db.engine.dispose()


def test_sqlite_pragmas_are_on(app):
    with app.app_context():
        with db.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000
