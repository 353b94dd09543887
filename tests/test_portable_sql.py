"""The project's raw SQL runs on PostgreSQL as well as on SQLite, checked where it is written, not left to a
PostgreSQL run that happens to execute it (the browser tests' reads are run there by hand, not by CI).

`SELECT COUNT(*) FROM (SELECT DISTINCT …)` passed every SQLite run and failed on PostgreSQL 15: a subquery
in FROM needs an alias there (PostgreSQL 16 dropped the rule, so a newer CI cluster would not see it, and a
lab on 15 would). The alias check reads the statements; the PostgreSQL check has the server parse and
type-check each one (PREPARE, nothing executed) against the migrated schema, which also finds SQLite's
other leniencies: comparing a boolean with 1, double-quoted strings, its own functions.
"""
from __future__ import annotations

import re

import pytest

from tests.support.raw_sql import (
    derived_tables_without_alias,
    is_template,
    numbered,
    project_statements,
    statements_in,
)
from tests.support.shared import REPO_ROOT

# Written against an older schema (a migration's own step, the migration tests' old rows): PostgreSQL's
# "no such column/table" there says which schema they were for, not that they are not portable. The
# migration tests run them on PostgreSQL at their own schema version.
OLDER_SCHEMA_PATHS = ("migrations/", "tests/services/test_migrations.py")
UNDEFINED = {"42703", "42P01"}  # undefined column, undefined table


@pytest.mark.database_free
def test_every_subquery_in_from_or_join_has_an_alias():
    missing = [f"{s.where}: {piece}" for s in project_statements() for piece in derived_tables_without_alias(s.sql)]
    assert not missing, "PostgreSQL up to 15 refuses a subquery in FROM without an alias:\n" + "\n".join(missing)


@pytest.mark.database_free
def test_the_alias_check_finds_what_postgresql_refused_and_nothing_else():
    refused = "SELECT COUNT(*) FROM (SELECT DISTINCT user_id, document_id FROM study_allocations)"
    assert derived_tables_without_alias(refused) == ["FROM (SELECT DISTINCT user_id, document_id FROM study_allocations)"]
    assert derived_tables_without_alias("SELECT * FROM t JOIN (SELECT id FROM u)\nWHERE 1 = 1") == ["JOIN (SELECT id FROM u)"]
    assert derived_tables_without_alias("SELECT * FROM (SELECT 1 AS x) ORDER BY x") == ["FROM (SELECT 1 AS x)"]
    for fine in ("SELECT COUNT(*) FROM (SELECT DISTINCT user_id FROM study_allocations) AS read_documents",
                 "SELECT COUNT(*) FROM (SELECT 1) pairs WHERE 1 = 1",
                 "SELECT * FROM t WHERE id IN (SELECT id FROM u)",
                 "SELECT 'FROM (SELECT 1)' FROM t",
                 "SELECT * FROM (SELECT (1) AS x, (SELECT 2) AS y) AS z"):
        assert derived_tables_without_alias(fine) == [], fine


@pytest.mark.database_free
def test_statements_are_found_where_they_are_written(tmp_path):
    """The reader finds the SQL a test runs, leaves out what is not a statement, and knows SQLite's own."""
    source = REPO_ROOT / "tests" / "e2e" / "test_adaptive_study.py"
    found = statements_in(source)
    assert any("FROM study_allocations" in s.sql and not s.sqlite_only for s in found)
    assert all(not s.sql.startswith("Delete") for s in project_statements())  # a sentence, not a statement
    assert numbered("SELECT a FROM t WHERE b = :b AND c = ? AND d = :b AND e = 'x?' AND f::text = %s") == (
        "SELECT a FROM t WHERE b = $1 AND c = $2 AND d = $1 AND e = 'x?' AND f::text = $3", 3)
    assert numbered("SELECT id FROM documents WHERE collection NOT IN :skipped") == (
        "SELECT id FROM documents WHERE collection NOT IN ($1)", 1)
    assert is_template("UPDATE t SET x = 1 WHERE {evaluation} NOT IN ('a')") and not is_template("SELECT '{x}'")


def _prepare(connection, sql: str, parameters: int) -> None:
    """Have PostgreSQL parse and type-check the statement, nothing executed. A parameter whose type the
    statement does not settle (`SELECT ?`) is declared text, as a driver would send a string."""
    import psycopg

    types = ["unknown"] * parameters
    while True:
        declared = f"({', '.join(types)})" if parameters else ""
        try:
            connection.execute(f"PREPARE leval_portable{declared} AS {sql}", prepare=False)
            connection.execute("DEALLOCATE leval_portable", prepare=False)
            return
        except psycopg.Error as error:
            unsettled = re.search(r"could not determine data type of parameter \$(\d+)", str(error))
            if unsettled is None or types[int(unsettled.group(1)) - 1] != "unknown":
                raise
            types[int(unsettled.group(1)) - 1] = "text"


@pytest.mark.postgres
@pytest.mark.slow
def test_every_raw_statement_prepares_on_postgresql(tmp_path, postgres_database):
    import psycopg
    from flask_migrate import upgrade
    from sqlalchemy import make_url

    from app import create_app
    from app.extensions import db

    app = create_app({"INSTANCE_PATH": tmp_path / "instance", "SQLALCHEMY_DATABASE_URI": postgres_database})
    with app.app_context():
        upgrade()
        db.session.remove()
        db.engine.dispose()
    checked, refused = 0, []
    url = make_url(postgres_database).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url, autocommit=True) as connection:
        for statement in project_statements():
            if statement.sqlite_only or is_template(statement.sql):
                continue
            sql, parameters = numbered(statement.sql)
            try:
                _prepare(connection, sql, parameters)
            except psycopg.Error as error:
                if error.sqlstate in UNDEFINED and statement.path.startswith(OLDER_SCHEMA_PATHS):
                    continue
                refused.append(f"{statement.where}: {str(error).splitlines()[0]}\n    {' '.join(sql.split())[:200]}")
                continue
            checked += 1
    assert checked > 150  # the reader still finds the suite's statements
    assert not refused, "PostgreSQL refuses raw SQL that SQLite runs:\n" + "\n".join(refused)
