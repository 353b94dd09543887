"""Which database the tests run on, and fresh PostgreSQL databases for them.

By default every test gets a real SQLite file. With LEVAL_TEST_DATABASE_URL set to a PostgreSQL
server (postgresql+psycopg://user@host:port/postgres), every test gets a database of its own on
that server instead: a copy of one migrated template (CREATE DATABASE … TEMPLATE, as the SQLite
run copies a template file), or an empty one for tests that build their own.
"""
from __future__ import annotations

import itertools
import os

from sqlalchemy import create_engine, make_url, text
from sqlalchemy.engine import URL

TEST_URL_VARIABLE = "LEVAL_TEST_DATABASE_URL"
_names = itertools.count()


def test_server_url() -> str:
    """The PostgreSQL server the suite runs on, or '' for SQLite."""
    return os.environ.get(TEST_URL_VARIABLE, "").strip()


def on_postgres() -> bool:
    return test_server_url() != ""


class PostgresServer:
    """Create and drop whole databases on one server, through its maintenance database."""

    def __init__(self, url: str):
        self.url: URL = make_url(url)
        if self.url.get_backend_name() != "postgresql":
            raise ValueError(f"{TEST_URL_VARIABLE} must be a postgresql+psycopg:// URL, not {self.url.drivername}")
        self.engine = create_engine(self.url, isolation_level="AUTOCOMMIT", pool_size=1, max_overflow=2)

    def new_name(self, kind: str = "t") -> str:
        return f"leval_{kind}_{os.getpid()}_{next(_names)}"

    def url_of(self, name: str) -> str:
        return self.url.set(database=name).render_as_string(hide_password=False)

    def create(self, name: str, template: str | None = None) -> str:
        """Create database `name` (a copy of `template`, else empty) and return its URL."""
        source = template or "template0"
        with self.engine.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{source}" STRATEGY FILE_COPY'))
        return self.url_of(name)

    def drop(self, name: str) -> None:
        with self.engine.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))

    def dispose(self) -> None:
        self.engine.dispose()


def json_value(value):
    """A JSON column read with raw SQL: text on SQLite, already decoded on PostgreSQL."""
    import json

    return json.loads(value) if isinstance(value, (str, bytes)) else value
