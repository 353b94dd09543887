"""Which database the tests run on, and fresh PostgreSQL databases for them.

By default every test gets a real SQLite file. With LEVAL_TEST_DATABASE_URL set to a PostgreSQL
server (postgresql+psycopg://user@host:port/postgres), every test gets a database of its own on
that server instead: a copy of one migrated template (CREATE DATABASE … TEMPLATE, as the SQLite
run copies a template file), or an empty one for tests that build their own.
"""
from __future__ import annotations

import itertools
import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor

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
    """Create and drop whole databases on one server, through its maintenance database.

    `fresh` hands out copies of a template that does not change (the migrated template, the
    empty template0) made ahead of need, and `discard` drops in the background: one helper thread
    does both while the tests run, so a test waits for neither.
    """

    def __init__(self, url: str):
        self.url: URL = make_url(url)
        if self.url.get_backend_name() != "postgresql":
            raise ValueError(f"{TEST_URL_VARIABLE} must be a postgresql+psycopg:// URL, not {self.url.drivername}")
        self.engine = create_engine(self.url, isolation_level="AUTOCOMMIT", pool_size=1, max_overflow=2)
        self._helper: ThreadPoolExecutor | None = None
        self._spares: dict[str | None, tuple[str, Future]] = {}

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
        """Drop database `name`, and first the copy of it made ahead, if it served as a template."""
        self._forget_spare(name)
        self._drop(name)

    def _drop(self, name: str) -> None:
        with self.engine.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))

    def _in_background(self, work, *args) -> Future:
        if self._helper is None:
            self._helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="test-databases")
        return self._helper.submit(work, *args)

    def fresh(self, template: str | None = None) -> tuple[str, str]:
        """(name, URL) of a new copy of `template` (else empty), which must not change while copies are made."""
        spare = self._spares.pop(template, None)
        if spare is None:
            name = self.new_name()
            url = self.create(name, template)
        else:
            name, made = spare
            url = made.result()
        following = self.new_name()
        self._spares[template] = (following, self._in_background(self.create, following, template))
        return name, url

    def discard(self, name: str) -> None:
        """Drop database `name` (a copy from `fresh`) in the background."""
        self._in_background(self._drop, name)

    def _forget_spare(self, template: str | None) -> None:
        spare = self._spares.pop(template, None)
        if spare is not None:
            spare[1].result()
            self._drop(spare[0])

    def dispose(self) -> None:
        for template in list(self._spares):
            self._forget_spare(template)
        if self._helper is not None:
            self._helper.shutdown(wait=True)  # the last drops finish before the engine goes
            self._helper = None
        self.engine.dispose()


class _DroppedDatabaseResets(logging.Filter):
    """Leave out the pool's report of a connection it cannot reset because the test's database was dropped.

    A connection a test abandoned is reset when the garbage collector finds it, by then on a database
    dropped WITH (FORCE). Formatting that report's traceback parses source (Python 3.11's error
    carets); when the collector runs inside a compile(), that nested parse breaks the compile with
    "SystemError: AST constructor recursion depth mismatch" in whatever test runs then.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return type(error).__name__ != "AdminShutdown"


def quiet_resets_on_dropped_databases() -> None:
    # A logger's filters see only records made on it, not its children's: name each pool class's.
    for name in ("sqlalchemy.pool.impl.QueuePool", "sqlalchemy.pool.impl.NullPool"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DroppedDatabaseResets) for f in logger.filters):
            logger.addFilter(_DroppedDatabaseResets())


def json_value(value):
    """A JSON column read with raw SQL: text on SQLite, already decoded on PostgreSQL."""
    import json

    return json.loads(value) if isinstance(value, (str, bytes)) else value
