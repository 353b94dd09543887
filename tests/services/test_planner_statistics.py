"""PostgreSQL keeps planner statistics after imports and migrations (issue 38).

Without them the planner guessed the size of never-analysed tables (a 20-row annotation_rounds) and
chose a plan ten times slower than SQLite's. The oracle is PostgreSQL's own catalogue: pg_class's
reltuples is -1 for a table never analysed, and pg_stat_user_tables records each ANALYZE.
"""
from __future__ import annotations

from sqlalchemy import text

from app import create_app
from app.cli.database import upgrade_database
from app.extensions import db
from app.services.importers import import_path
from app.services.studies.setup import StudySpec, create_study
from tests.support.study_data import write_study_set


def _app(tmp_path):
    return create_app({"INSTANCE_PATH": tmp_path / "instance", "TESTING": True})


def _estimated_rows(table: str) -> float:
    return db.session.execute(text("SELECT reltuples FROM pg_class WHERE relname = :t"), {"t": table}).scalar()


def test_migrations_end_with_statistics_and_small_tables_get_a_low_analyse_threshold(tmp_path, postgres_database):
    app = _app(tmp_path)
    with app.app_context():
        upgrade_database()  # what serve and every command run first
        analysed = set(db.session.execute(text(
            "SELECT relname FROM pg_stat_user_tables WHERE last_analyze IS NOT NULL")).scalars())
        assert {"annotation_rounds", "scores", "predictions", "study_answers"} <= analysed
        options = db.session.execute(text("SELECT reloptions FROM pg_class WHERE relname = 'annotation_rounds'")).scalar()
        assert "autovacuum_analyze_threshold=5" in options
        assert db.session.execute(text("SELECT reloptions FROM pg_class WHERE relname = 'metric_results'")).scalar() is None
        db.session.remove()
        db.engine.dispose()


def test_an_import_and_a_new_study_leave_their_tables_analysed(tmp_path, postgres_database):
    app = _app(tmp_path)
    with app.app_context():
        upgrade_database()
        folder = write_study_set(tmp_path / "data", documents=2, questions_each=5)
        assert not import_path(folder).failed
        assert _estimated_rows("predictions") == 40 and _estimated_rows("questions") == 10
        create_study(StudySpec(name="Visitors", status="open"))
        assert _estimated_rows("study_answers") == 40
        db.session.remove()
        db.engine.dispose()
