"""A quick command starts quickly: no Alembic run on a database at the newest migration, no models for `summary`.

The fast path must never skip a migration: the heads read from the files equal Alembic's, and a
database one migration behind is still brought up to date.
"""
from __future__ import annotations

import os
import subprocess
import sys

from alembic.script import ScriptDirectory
from flask_migrate import downgrade
from sqlalchemy import text

from app.cli.database import migration_heads, upgrade_database
from app.extensions import db
from app.services.summary import COUNTED_TABLES
from tests.conftest import REPO_ROOT


def _alembic_heads(app) -> set[str]:
    config = app.extensions["migrate"].migrate.get_config(app.extensions["migrate"].directory)
    return set(ScriptDirectory.from_config(config).get_heads())


def _applied(app) -> set[str]:
    with db.engine.connect() as connection:
        return set(connection.scalars(text("SELECT version_num FROM alembic_version")))


def test_heads_read_from_the_files_are_alembics(app):
    with app.app_context():
        heads = migration_heads(app.extensions["migrate"].directory)
        assert heads and heads == _alembic_heads(app)


def test_a_database_one_migration_behind_is_still_upgraded(app):
    with app.app_context():
        head = _alembic_heads(app)
        downgrade(revision="-1")
        assert _applied(app) and _applied(app) != head
        upgrade_database()
        assert _applied(app) == head


def test_a_new_database_gets_the_whole_schema(tmp_path):
    from app import create_app

    fresh = create_app({"INSTANCE_PATH": tmp_path / "instance", "TESTING": True}, web=False)
    with fresh.app_context():
        upgrade_database()
        assert _applied(fresh) == _alembic_heads(fresh)
        db.engine.dispose()


def test_summary_counts_tables_the_models_define(app):
    with app.app_context():
        assert set(COUNTED_TABLES) <= set(db.metadata.tables)


def test_summary_starts_without_the_models_and_without_running_alembic(tmp_path):
    env = {"LEVAL_INSTANCE": str(tmp_path / "instance"), "PATH": "/usr/bin:/bin"}
    first = subprocess.run([sys.executable, "run.py", "summary"], cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr  # a new database: migrated by Alembic
    again = subprocess.run([sys.executable, "-X", "importtime", "run.py", "summary", "--json"], cwd=REPO_ROOT, env=env,
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in again.stderr.splitlines() if line.startswith("import time:")}
    assert '"documents": 0' in again.stdout
    assert "app.models" not in imported and "logging.config" not in imported
    assert not any(name.startswith("migrations") or name.endswith("_py") for name in imported)


def test_the_app_runs_numpy_s_blas_on_one_thread_unless_told_otherwise():
    """OpenBLAS's extra threads spin while they wait: on the analyses' small matrices they cost 4-6 times the
    CPU of one thread (issue 38). The app asks for one before numpy loads; an explicit setting wins."""
    code = "import os, app, numpy; print(len(os.listdir('/proc/self/task')), os.environ['OPENBLAS_NUM_THREADS'])"
    env = {key: value for key, value in os.environ.items()
           if key not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["1", "1"]
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env={**env, "OPENBLAS_NUM_THREADS": "2"},
                          capture_output=True, text=True, check=True)
    assert done.stdout.split()[1] == "2"
