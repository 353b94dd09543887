"""Health check and the overview page."""
from __future__ import annotations

import json
import logging
import os
import sqlite3
from contextlib import contextmanager

from sqlalchemy import event, text

from app import create_app
from app.extensions import db
from tests.conftest import AuthActions


def test_healthz_needs_no_login(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "db": "ok"}


def test_healthz_reports_a_broken_database(tmp_path):
    broken = create_app({
        "INSTANCE_PATH": tmp_path / "inst",
        "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'missing-dir' / 'db.sqlite'}",
    })
    response = broken.test_client().get("/healthz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["status"] == "degraded" and body["db"] == "error" and body["kind"] == "unavailable"


def test_overview_shows_counts(client, auth):
    auth.login("admin")
    page = client.get("/").get_data(as_text=True)
    assert "Overview" in page and "Documents" in page


def test_database_url_override(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    monkeypatch.setenv("LEVAL_DATABASE_URL", url)
    app = create_app({"INSTANCE_PATH": tmp_path / "inst"})
    assert app.config["SQLALCHEMY_DATABASE_URI"] == url
    with app.app_context():
        from app.extensions import db

        assert db.session.execute(text("SELECT 1")).scalar() == 1
        db.engine.dispose()


def test_instance_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("LEVAL_INSTANCE", str(tmp_path / "env-inst"))
    app = create_app()
    assert app.instance_path == str((tmp_path / "env-inst").resolve())
    assert (tmp_path / "env-inst" / "secret_key").exists()


# -- a degraded answer (issue 41, item 7): anyone may ask, so it names no path and no process --------------------

def degraded(client):
    from tests.web.test_storage_faults import app_folders, folder_fault

    with folder_fault(app_folders(client.application)["uploads"], "readonly"):
        return client.get("/healthz")


def test_an_anonymous_degraded_answer_is_generic_and_the_details_go_to_the_log(app, caplog):
    app.config["LEVAL_HEALTH_PROBE_SECONDS"] = 0  # no remembered success
    with caplog.at_level(logging.WARNING):
        response = degraded(app.test_client())
    assert response.status_code == 503 and int(response.headers["Retry-After"]) > 0
    assert response.get_json() == {"status": "degraded", "db": "error", "kind": "readonly", "retryable": True}
    text = response.get_data(as_text=True)
    for secret in (app.instance_path, "uploads", ".health-probe", str(os.getpid())):
        assert secret not in text, secret
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert os.path.join(app.instance_path, "uploads") in logged and f".health-probe-{os.getpid()}" in logged


def test_a_signed_in_admin_sees_what_failed_and_no_one_else_does(app):
    app.config["LEVAL_HEALTH_PROBE_SECONDS"] = 0
    for role in ("annotator", "researcher", "admin"):
        client = app.test_client()
        AuthActions(client).login(role)
        body = degraded(client).get_json()
        if role == "admin":
            assert body["kind"] == "readonly" and body["detail"].startswith(
                f"uploads folder {os.path.join(app.instance_path, 'uploads')}: "), body
        else:
            assert "detail" not in body and app.instance_path not in json.dumps(body), role


def test_a_degraded_answer_survives_a_session_whose_account_cannot_be_read(app):
    """The database itself is gone: the admin's session cannot be checked, and the answer is still the generic 503."""
    client = app.test_client()
    AuthActions(client).login("admin")
    app.config["LEVAL_HEALTH_PROBE_SECONDS"] = 0
    with database_gone(app):
        response = client.get("/healthz")
    assert response.status_code == 503 and response.get_json()["kind"] == "unavailable", response.get_json()
    assert "detail" not in response.get_json()
    assert client.get("/healthz").get_json() == {"status": "ok", "db": "ok"}


@contextmanager
def database_gone(app):
    """Every statement fails as the driver fails when its database cannot be reached (reads too)."""
    def unreachable(cursor, statement, parameters, context):
        if context.dialect.name == "postgresql":
            import psycopg

            raise psycopg.errors.AdminShutdown("terminating connection due to administrator command")
        error = sqlite3.OperationalError("unable to open database file")
        error.sqlite_errorcode = sqlite3.SQLITE_CANTOPEN
        raise error

    with app.app_context():
        engine = db.engine
    event.listen(engine, "do_execute", unreachable)
    try:
        yield
    finally:
        event.remove(engine, "do_execute", unreachable)
