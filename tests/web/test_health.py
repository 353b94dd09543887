"""Health check and the overview page."""
from __future__ import annotations

from sqlalchemy import text

from app import create_app


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
    assert body["status"] == "degraded" and body["db"].startswith("error")


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
