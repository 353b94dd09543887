"""Shared fixtures in the flaskr style: app, client, runner and auth, on a real SQLite file.

With LEVAL_TEST_DATABASE_URL set to a PostgreSQL server, every test runs on a PostgreSQL database
of its own instead (tests/support/databases.py); tests marked sqlite_only are skipped there.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from flask_migrate import upgrade
from sqlalchemy import make_url

from app import create_app
from app.extensions import db
from app.services.accounts import create_user
from tests.support.databases import PostgresServer, on_postgres, quiet_resets_on_dropped_databases, test_server_url
from tests.support.live import CSRF_RE
from tests.support.openai_stub import StubOpenAIServer
from tests.support.predictions import load_demo_data
from tests.support.shared import REPO_ROOT, require_shared  # noqa: F401  (REPO_ROOT: imported by tests)

# Fixtures that open a database; tests marked database_free must use none of them. (client, auth,
# demo and the others build on app: a test's fixture names include those its fixtures use.)
DATABASE_FIXTURES = frozenset({"app", "live_server", "postgres_database", "clone_database"})
PASSWORDS = {"admin": "admin-pass-123", "researcher": "research-pass-123", "annotator": "annotate-pass-123"}


@pytest.fixture
def shared_leval() -> Path:
    return require_shared()


def pytest_collection_modifyitems(config, items):
    if not on_postgres():
        return
    for item in items:
        marker = item.get_closest_marker("sqlite_only")
        if marker is not None:
            reason = marker.args[0] if marker.args else "checks SQLite itself"
            item.add_marker(pytest.mark.skip(reason=f"SQLite only ({reason}); this run is on PostgreSQL"))


@pytest.fixture(scope="session")
def postgres_server():
    """The PostgreSQL server of this run (LEVAL_TEST_DATABASE_URL), or None on SQLite."""
    if not on_postgres():
        yield None
        return
    quiet_resets_on_dropped_databases()
    server = PostgresServer(test_server_url())
    yield server
    server.dispose()


def _build_template(app_config: dict) -> None:
    template = create_app(app_config)
    with template.app_context():
        upgrade()
        for role, password in PASSWORDS.items():
            create_user(role, password, role)
        db.session.remove()
        db.engine.dispose()


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory, postgres_server):
    """Build one database through the real migration chain, with three users, to copy per test.

    On SQLite it is a file (the path is returned); on PostgreSQL a template database (its name).
    """
    instance = tmp_path_factory.mktemp("template")
    if postgres_server is None:
        _build_template({"INSTANCE_PATH": instance})
        yield instance / "leval.db"
        return
    name = postgres_server.new_name("template")
    url = postgres_server.create(name)
    _build_template({"INSTANCE_PATH": instance, "SQLALCHEMY_DATABASE_URI": url})
    yield name
    postgres_server.drop(name)


@pytest.fixture(autouse=True)
def test_database(request, monkeypatch, postgres_server):
    """On PostgreSQL: an empty database of the test's own, named in LEVAL_DATABASE_URL for every app and process.

    Tests that use the `app` fixture get a migrated copy instead (see migrated_copy), and browser
    tests' `live_server` a copy of the first run's database (tests/e2e/conftest.py).
    """
    if request.node.get_closest_marker("database_free"):
        # CI's PostgreSQL pass leaves these out: one that opens a database must not be marked so.
        opened = DATABASE_FIXTURES & set(request.fixturenames)
        if opened:
            pytest.fail(f"marked database_free, but uses {', '.join(sorted(opened))}")
        yield None
        return
    if postgres_server is None or {"app", "live_server"} & set(request.fixturenames):
        yield None
        return
    name, url = postgres_server.fresh()
    monkeypatch.setenv("LEVAL_DATABASE_URL", url)
    yield url
    postgres_server.discard(name)


@pytest.fixture
def migrated_copy(migrated_template, postgres_server, monkeypatch):
    """Return copy(instance) -> app config: a fresh copy of the migrated template for an app in `instance`.

    The first copy of a test also becomes LEVAL_DATABASE_URL, so server and CLI processes the test
    starts on that instance use the same database.
    """
    created: list[str] = []

    def copy(instance: Path) -> dict:
        instance.mkdir(parents=True, exist_ok=True)
        if postgres_server is None:
            shutil.copy(migrated_template, instance / "leval.db")
            return {"INSTANCE_PATH": instance}
        name, url = postgres_server.fresh(migrated_template)
        if not created:
            monkeypatch.setenv("LEVAL_DATABASE_URL", url)
        created.append(name)
        return {"INSTANCE_PATH": instance, "SQLALCHEMY_DATABASE_URI": url}

    yield copy
    for name in created:
        postgres_server.discard(name)


@pytest.fixture
def app(tmp_path, migrated_copy):
    app = create_app({**migrated_copy(tmp_path / "instance"), "TESTING": True})
    yield app
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def demo(app):
    """The app with the shipped demo data set imported."""
    load_demo_data(app)
    return app


@pytest.fixture
def workers(app):
    """Two job worker threads on the app, stopped after the test."""
    from app.services.jobs.worker import start_workers

    consumer = start_workers(app, 2)
    yield consumer
    consumer.stop(graceful=True)


@pytest.fixture
def stub(request, monkeypatch):
    """A stub OpenAI-compatible server on 127.0.0.1.

    A test module may set STUB_POLICY (the reply policy) and STUB_IS_DEFAULT_ENDPOINT (point
    OPENAI_BASE_URL and OPENAI_API_KEY at the stub, as a user of the CLI would).
    """
    policy = getattr(request.module, "STUB_POLICY", None)
    with StubOpenAIServer(**({"policy": policy} if policy else {})) as server:
        if getattr(request.module, "STUB_IS_DEFAULT_ENDPOINT", False):
            monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
            monkeypatch.setenv("OPENAI_API_KEY", "sk-cli-test-key-0123456789")
        yield server


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


def csrf_token(client) -> str:
    """Read the CSRF token the way the browser does, from the page's meta tag."""
    page = client.get("/login").get_data(as_text=True)
    if 'name="csrf-token"' not in page:  # signed in: /login redirects, so ask another page
        page = client.get("/", follow_redirects=True).get_data(as_text=True)
    match = CSRF_RE.search(page)
    assert match, "no CSRF token on the page"
    return match.group(1)


class AuthActions:
    def __init__(self, client):
        self._client = client

    def login(self, username: str = "annotator", password: str | None = None):
        password = password if password is not None else PASSWORDS.get(username, "")
        token = csrf_token(self._client)
        return self._client.post("/login", data={"username": username, "password": password, "csrf_token": token})

    def logout(self):
        token = csrf_token(self._client)
        return self._client.post("/logout", data={"csrf_token": token})

    def token(self) -> str:
        return csrf_token(self._client)


@pytest.fixture
def auth(client):
    return AuthActions(client)


@pytest.fixture
def clone_database():
    """Return clone() -> app config for a copy of the test's database (LEVAL_DATABASE_URL) as it is now.

    On SQLite it returns {}: copying the instance folder copies its database file.
    """
    made: list[tuple[PostgresServer, str]] = []

    def clone() -> dict:
        url = os.environ.get("LEVAL_DATABASE_URL", "")
        if not url.startswith("postgresql"):
            return {}
        server = PostgresServer(make_url(url).set(database="postgres").render_as_string(hide_password=False))
        name = server.new_name()
        made.append((server, name))
        return {"SQLALCHEMY_DATABASE_URI": server.create(name, template=make_url(url).database)}

    yield clone
    for server, name in made:
        server.drop(name)
        server.dispose()


@pytest.fixture(scope="session")
def postgres_url(postgres_server):
    """A PostgreSQL server for tests that need one: this run's, else a throw-away cluster of our own.

    Without either (no LEVAL_TEST_DATABASE_URL, no initdb/pg_ctl) the test is skipped with the
    reason, or fails under CI=true, where it is expected to run.
    """
    if postgres_server is not None:
        yield test_server_url()
        return
    from tests.support import pg_cluster
    from tests.support.shared import in_ci

    if pg_cluster.bin_dir() is None:
        message = ("needs PostgreSQL: set LEVAL_TEST_DATABASE_URL, or install Debian's postgresql package "
                   "(initdb, pg_ctl) for a throw-away cluster")
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    folder = pg_cluster.make_folder()
    try:
        yield pg_cluster.start(folder)
    finally:
        pg_cluster.stop(folder)


@pytest.fixture
def postgres_database(postgres_url, monkeypatch):
    """An empty PostgreSQL database of the test's own, named in LEVAL_DATABASE_URL for every app and process."""
    server = PostgresServer(postgres_url)
    name = server.new_name("pg")
    url = server.create(name)
    monkeypatch.setenv("LEVAL_DATABASE_URL", url)
    yield url
    server.drop(name)
    server.dispose()
