"""Storage faults (audit finding 9): write failures answer a retryable 503, /healthz tells the truth,
and a damaged database stops the start with one clear line.

A full disk and a read-only database are the driver's real errors (SQLITE_FULL raised where the
driver raises it; a database opened read-only); damage is real bytes overwritten in a real file.
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import contextmanager

import pytest
from sqlalchemy import event, func, select

from app import create_app
from app.extensions import db
from app.models import Score
from tests.conftest import PASSWORDS, REPO_ROOT, AuthActions, csrf_token
from tests.support.scoring_helpers import demo, first_question, post_score, signed_in  # noqa: F401  (demo: fixture)


def full_disk_error(dialect: str) -> Exception:
    """The driver's own error for a full disk: SQLITE_FULL, or PostgreSQL's disk_full (SQLSTATE 53100)."""
    if dialect == "postgresql":
        import psycopg

        return psycopg.errors.DiskFull("could not extend file: No space left on device")
    error = sqlite3.OperationalError("database or disk is full")
    error.sqlite_errorcode = sqlite3.SQLITE_FULL
    return error


@contextmanager
def disk_full(app):
    """Every write statement fails as the database fails on a full disk, reads still work."""
    def refuse_writes(cursor, statement, parameters, context):
        if statement.lstrip().split(None, 1)[0].upper() in ("INSERT", "UPDATE", "DELETE", "REPLACE"):
            raise full_disk_error(context.dialect.name)

    with app.app_context():
        engine = db.engine
    event.listen(engine, "do_execute", refuse_writes)
    try:
        yield
    finally:
        event.remove(engine, "do_execute", refuse_writes)


def scores(app) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(Score))


def test_a_full_disk_answers_a_retryable_503_on_the_score_api_and_saves_nothing(demo):  # noqa: F811
    client, auth = signed_in(demo)
    question = first_question(client)
    token = auth.token()
    before = scores(demo)
    with disk_full(demo):
        response = post_score(client, token, question_id=question, label="A", value=4)
        health = demo.test_client().get("/healthz")
    assert response.status_code == 503 and response.is_json, response.get_data(as_text=True)
    assert int(response.headers["Retry-After"]) > 0
    body = response.get_json()
    assert body["retryable"] is True and "Nothing was saved" in body["error"] and "disk is full" in body["error"]
    assert scores(demo) == before
    assert health.status_code == 503 and health.get_json()["kind"] == "full"
    # The page's script retries: once there is space again the same save goes through.
    assert post_score(client, token, question_id=question, label="A", value=4).status_code == 200
    assert scores(demo) == before + 1


def test_a_full_disk_answers_a_styled_503_on_pages(demo):  # noqa: F811
    client, auth = signed_in(demo, "admin")
    with disk_full(demo):
        response = client.post("/admin/users", data={"csrf_token": auth.token(), "username": "newbie",
                                                     "role": "annotator", "password": "a-long-password-1"})
    page = response.get_data(as_text=True)
    assert response.status_code == 503 and response.mimetype == "text/html"
    assert "Nothing was saved" in page and 'id="main"' in page and "Traceback" not in page
    assert response.headers["Retry-After"]


def read_only_app(app):
    """The same database, opened read-only (as with a read-only instance folder, or a PostgreSQL standby)."""
    path = os.path.join(app.instance_path, "leval.db")
    with app.app_context():
        db.engine.dispose()
        url = db.engine.url
    if url.get_backend_name() == "postgresql":
        return create_app({"INSTANCE_PATH": app.instance_path, "TESTING": True,
                           "SQLALCHEMY_DATABASE_URI": url.render_as_string(hide_password=False),
                           "SQLALCHEMY_ENGINE_OPTIONS": {"connect_args": {
                               "options": "-c default_transaction_read_only=on"}}})
    return create_app({"INSTANCE_PATH": app.instance_path, "TESTING": True,
                       "SQLALCHEMY_DATABASE_URI": f"sqlite:///file:{path}?mode=ro&uri=true"})


def test_sign_in_on_a_read_only_database_is_a_503_not_a_500(app):
    readonly = read_only_app(app)
    client = readonly.test_client()
    response = client.post("/login", data={"username": "admin", "password": PASSWORDS["admin"],
                                           "csrf_token": csrf_token(client)})
    page = response.get_data(as_text=True)
    assert response.status_code == 503 and "Nothing was saved" in page and response.headers["Retry-After"]
    health = client.get("/healthz")
    assert health.status_code == 503 and health.get_json()["kind"] == "readonly"


def damage(path, *, offset: int, length: int) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(b"\xa5" * length)


def checkpointed_copy(app, tmp_path):
    """A demo database folded into one file (no WAL), for damaging."""
    with app.app_context():
        db.session.execute(db.text("PRAGMA wal_checkpoint(TRUNCATE)"))
        db.session.commit()
        db.session.remove()
        db.engine.dispose()
    folder = tmp_path / "damaged"
    folder.mkdir()
    shutil.copy(os.path.join(app.instance_path, "leval.db"), folder / "leval.db")
    shutil.copy(os.path.join(app.instance_path, "secret_key"), folder / "secret_key") if os.path.exists(
        os.path.join(app.instance_path, "secret_key")) else None
    return folder


@pytest.mark.sqlite_only("a damaged database file")
def test_healthz_answers_503_for_a_database_damaged_mid_file(demo, tmp_path):  # noqa: F811
    folder = checkpointed_copy(demo, tmp_path)
    size = (folder / "leval.db").stat().st_size
    assert size > 40 * 4096
    damage(folder / "leval.db", offset=(size // 4096 // 2) * 4096, length=8 * 4096)
    damaged = create_app({"INSTANCE_PATH": folder, "TESTING": True})
    health = damaged.test_client().get("/healthz")
    body = health.get_json()
    assert health.status_code == 503 and body["status"] == "degraded" and body["kind"] == "damaged"
    assert health.headers["Retry-After"]


def test_healthz_checks_the_database_takes_writes(app, monkeypatch):
    assert app.test_client().get("/healthz").get_json() == {"status": "ok", "db": "ok"}
    with disk_full(app):
        app.config["LEVAL_HEALTH_PROBE_SECONDS"] = 0  # no remembered success
        assert app.test_client().get("/healthz").status_code == 503
    assert app.test_client().get("/healthz").status_code == 200


def start_server(folder, port: int = 5999):
    env = {**os.environ, "LEVAL_INSTANCE": str(folder), "LEVAL_DEMO": "0", "LEVAL_WORKERS": "0"}
    return subprocess.run([sys.executable, "run.py", "serve", "--port", str(port)], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.sqlite_only("a damaged database file")
@pytest.mark.parametrize("kind", ["header", "truncated", "mid-file"])
def test_a_start_on_a_damaged_database_prints_one_clear_line_and_exits_non_zero(demo, tmp_path, kind):  # noqa: F811
    folder = checkpointed_copy(demo, tmp_path)
    path = folder / "leval.db"
    size = path.stat().st_size
    if kind == "header":
        damage(path, offset=0, length=100)
    elif kind == "truncated":
        os.truncate(path, (size // 4096 // 2) * 4096 + 1000)
    else:
        damage(path, offset=(size // 4096 // 2) * 4096, length=8 * 4096)
    done = start_server(folder)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: cannot start: the database"), done.stderr
    assert "damaged or unreadable" in lines[0] and "running at" not in done.stdout


def test_a_full_instance_folder_answers_503_on_an_upload_and_stages_nothing(demo, monkeypatch):  # noqa: F811
    import errno

    from app.services.uploads import staging
    from tests.support.predictions import demo_file, post_upload

    def no_space(path, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(staging, "_write_atomic", no_space)
    client, auth = signed_in(demo, "researcher")
    response = post_upload(client, auth, [("alpha.pred.jsonl", demo_file("human_eval/terse-13b.pred.jsonl", "alpha"))])
    page = response.get_data(as_text=True)
    assert response.status_code == 503 and "Nothing was saved" in page and "disk is full" in page
    assert response.headers["Retry-After"]
    staged = os.path.join(demo.instance_path, "uploads", "staging")
    assert not os.path.isdir(staged) or not os.listdir(staged), "neither a manifest nor a payload is left staged"


def test_healthz_stays_ok_when_many_requests_probe_at_once(app):
    """Under load the remembered probe expires for many requests together: none may fail on another's probe."""
    import threading

    app.config["LEVAL_HEALTH_PROBE_SECONDS"] = 0  # every request probes
    app.config["LEVAL_HEALTH_INTEGRITY_SECONDS"] = 3600
    statuses: list[int] = []

    def poll() -> None:
        client = app.test_client()
        for _ in range(15):
            statuses.append(client.get("/healthz").status_code)

    threads = [threading.Thread(target=poll) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * 120


# -- every folder the app writes (audit "Hardening, second round", finding 9) ----------------------------------
# We run as root, for whom chmod read-only changes nothing, and a read-only bind mount needs privileges the
# suite does not have: the faults are injected where a write reaches the operating system.

@contextmanager
def folder_fault(folder, kind: str, *, below: bool = False):
    """Writes in `folder` (and in every folder below it, when asked) fail as on a read-only mount (EROFS when
    a file is opened for writing) or a full disk (ENOSPC when bytes are written; Python's buffered files
    at their open). Reads, and every other folder, are untouched."""
    import builtins
    import errno
    import io
    from pathlib import Path

    target = Path(folder).resolve()
    failing: set[int] = set()
    real_os_open, real_os_write, real_io_open = os.open, os.write, io.open

    def hit(path) -> bool:
        if isinstance(path, int):
            return False
        parent = Path(os.fsdecode(path)).resolve().parent
        return parent == target or (below and parent.is_relative_to(target))

    def refused(path, code: int) -> OSError:
        return OSError(code, os.strerror(code), os.fsdecode(path))

    def os_open(path, flags, mode=0o777, *args, **kwargs):
        if hit(path) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            if kind == "readonly":
                raise refused(path, errno.EROFS)
            handle = real_os_open(path, flags, mode, *args, **kwargs)
            failing.add(handle)
            return handle
        return real_os_open(path, flags, mode, *args, **kwargs)

    def os_write(handle, data):
        if handle in failing:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_os_write(handle, data)

    def io_open(file, mode="r", *args, **kwargs):
        if hit(file) and any(flag in mode for flag in "wax+"):
            raise refused(file, errno.EROFS if kind == "readonly" else errno.ENOSPC)
        return real_io_open(file, mode, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "open", os_open)
        patch.setattr(os, "write", os_write)
        patch.setattr(io, "open", io_open)
        patch.setattr(builtins, "open", io_open)
        yield


def app_folders(app) -> dict:
    """Where the app writes files, as the README and app/config.py say, found without asking the app."""
    from pathlib import Path

    instance = Path(app.instance_path)
    return {"instance": instance, "uploads": instance / "uploads", "staging": instance / "uploads" / "staging",
            "deleted": instance / "deleted", "downloads": instance / "downloads"}


@pytest.mark.parametrize("kind", ["readonly", "full"])
@pytest.mark.parametrize("label", ["instance", "uploads", "staging", "deleted", "downloads"])
def test_healthz_answers_503_when_any_folder_the_app_writes_is_read_only_or_full(app, label, kind):
    """An admin's answer names the folder (anyone else's only the kind: tests/web/test_health.py)."""
    app.config["LEVAL_HEALTH_PROBE_SECONDS"] = 0  # no remembered success
    client = app.test_client()
    AuthActions(client).login("admin")
    assert client.get("/healthz").status_code == 200
    folder = app_folders(app)[label]
    with folder_fault(folder, kind):
        health = client.get("/healthz")
    body = health.get_json()
    assert health.status_code == 503 and body["status"] == "degraded" and body["retryable"] is True
    assert body["kind"] == kind and body["detail"].startswith(f"{label} folder {folder}: "), body
    assert health.headers["Retry-After"]
    assert client.get("/healthz").get_json() == {"status": "ok", "db": "ok"}  # a failure is never remembered
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".health-probe")], "the probe cleans up"


def test_a_read_only_uploads_folder_fails_the_upload_and_healthz_alike(demo):  # noqa: F811
    """The finding: uploads answered 503, /healthz said 200 ok."""
    from tests.support.predictions import demo_file, post_upload

    demo.config["LEVAL_HEALTH_PROBE_SECONDS"] = 0
    client, auth = signed_in(demo, "researcher")
    with folder_fault(app_folders(demo)["uploads"], "readonly", below=True):
        response = post_upload(client, auth, [("alpha.pred.jsonl",
                                               demo_file("human_eval/terse-13b.pred.jsonl", "alpha"))])
        health = demo.test_client().get("/healthz")
    assert response.status_code == 503 and "Nothing was saved" in response.get_data(as_text=True)
    assert health.status_code == 503 and health.get_json()["kind"] == "readonly"
