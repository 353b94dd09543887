"""Faults with real processes: kill -9 of the server mid-job and mid-traffic, a database locked by
another process, damaged uploads.

The server is `python run.py serve` with its embedded job workers, started by the e2e helper.
(tests/services/test_metric_jobs.py kills a separate `run.py worker`; tests/e2e/test_scoring.py checks that
the question page reports a failed save and retries it.)
"""
from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app import create_app
from app.extensions import db
from app.models import System
from app.services.jobs.worker import execute_job
from app.services.metrics import submit_metrics_job
from tests.e2e.conftest import start_server, stop_server
from tests.support.databases import json_value, on_postgres
from tests.support.live import HttpSession, InstanceDatabase, human_eval_questions, instance_database, prepare_instance
from tests.support.predictions import (
    batch_id, confirm, demo_file, load_demo_data, make_zip, post_upload, stored_files,
)

FRESH = "fresh-9b"
FRESH_FILES = {  # a new system's answers: the demo's, renamed, so no metric of it exists yet
    f"{FRESH}.pred.jsonl": "human_eval/terse-13b.pred.jsonl",
    f"{FRESH}/quality.pred.jsonl": "exam_eval/terse-13b/quality.pred.jsonl",
    f"{FRESH}/scientific_qa.pred.jsonl": "ngram_eval/terse-13b/scientific_qa.pred.jsonl",
}


def query(instance: Path, sql: str, *params, database: dict | None = None) -> list[tuple]:
    """Read the server's database directly, as another process would (WAL lets readers in)."""
    url = (database or {}).get("SQLALCHEMY_DATABASE_URI")
    with (InstanceDatabase(url) if url else instance_database(instance)) as con:
        return [tuple(row) for row in con.execute(sql, params).fetchall()]


def wait_until(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def kill_9(server) -> None:
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait(timeout=10)
    assert server.process.returncode == -signal.SIGKILL


# A metrics job survives kill -9


def metric_rows(instance: Path, system_id: int, database: dict | None = None) -> dict:
    rows = query(instance, "SELECT prediction_id, metric, profile, value, computed_at FROM metric_results "
                           "WHERE system_id = ?", system_id, database=database)
    found = {(pid, metric, profile): (value, computed_at) for pid, metric, profile, value, computed_at in rows}
    assert len(found) == len(rows), "duplicate metric rows"
    return found


def aggregate_rows(instance: Path, system_id: int, database: dict | None = None) -> dict:
    rows = query(instance, "SELECT task, metric, profile, value, n FROM metric_aggregates WHERE system_id = ?", system_id,
                 database=database)
    return {(task, metric, profile): (value, n) for task, metric, profile, value, n in rows}


def submit_slow_metrics_job(instance: Path, system: str, item_delay: float) -> int:
    """Queue a metrics job that pauses after each prediction, for the next server start to pick up."""
    app = create_app({"INSTANCE_PATH": instance})
    with app.app_context():
        job = submit_metrics_job(db.session.scalars(select(System).where(System.name == system)).one(),
                                 item_delay=item_delay, enqueue=False)
        job_id = job.id
        db.session.remove()
        db.engine.dispose()
    return job_id


def score_uninterrupted(instance: Path, database: dict) -> None:
    """Run the same metrics job on a twin instance (and database), start to finish, through the same job code."""
    app = create_app({"INSTANCE_PATH": instance, **database})
    with app.app_context():
        job = submit_metrics_job(db.session.scalars(select(System).where(System.name == FRESH)).one())
        job_id = job.id
    execute_job(app, job_id)
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.mark.slow
def test_a_metrics_job_survives_kill_9_of_the_server_and_matches_an_uninterrupted_run(tmp_path, clone_database):
    fresh = tmp_path / "fresh"
    for name, source in FRESH_FILES.items():
        (fresh / name).parent.mkdir(parents=True, exist_ok=True)
        (fresh / name).write_bytes(demo_file(source, FRESH))
    instance, twin = tmp_path / "instance", tmp_path / "twin"
    prepare_instance(instance, folders=(fresh,))
    shutil.copytree(instance, twin)
    twin_database = clone_database()  # on PostgreSQL the twin needs its own copy of the database too
    (system_id,) = query(instance, "SELECT id FROM systems WHERE name = ?", FRESH)[0]

    job_id = submit_slow_metrics_job(instance, FRESH, item_delay=0.25)  # queued: the server's start picks it up
    server = start_server(instance, {"LEVAL_WORKERS": "1"})
    try:
        assert query(instance, "SELECT kind FROM jobs") == [("metrics",)]
        wait_until(lambda: query(instance, "SELECT 1 FROM jobs WHERE id = ? AND status = 'running' AND done >= 4",
                                 job_id), 60, "the job's first batches")
        kill_9(server)
    finally:
        if server.process.poll() is None:
            stop_server(server)
    status, done, total = query(instance, "SELECT status, done, total FROM jobs WHERE id = ?", job_id)[0]
    assert status == "running" and 0 < done < total == 22, "killed mid-job"
    before = metric_rows(instance, system_id)
    assert 0 < len({pid for pid, _, _ in before}) < 22 and aggregate_rows(instance, system_id) == {}

    server = start_server(instance, {"LEVAL_WORKERS": "1"})  # the restart finds the dead worker's job and resumes it
    try:
        wait_until(lambda: query(instance, "SELECT 1 FROM jobs WHERE id = ? AND status IN ('done', 'failed')", job_id),
                   90, "the resumed job to finish")
    finally:
        stop_server(server)
    status, done, attempts, result = query(instance, "SELECT status, done, attempts, result FROM jobs WHERE id = ?",
                                           job_id)[0]
    assert (status, done, attempts) == ("done", 22, 2)
    assert json_value(result)["resumed_from"] == len({pid for pid, _, _ in before})
    after = metric_rows(instance, system_id)
    assert all(after[key] == row for key, row in before.items()), "items finished before the kill were recomputed"

    score_uninterrupted(twin, twin_database)
    clean = metric_rows(twin, system_id, twin_database)
    assert {k: v[0] for k, v in after.items()} == {k: v[0] for k, v in clean.items()} and len(clean) > 22 * 4
    assert aggregate_rows(instance, system_id) == aggregate_rows(twin, system_id, twin_database) != {}


# No acknowledged score is lost


class Annotator(threading.Thread):
    """Score one's own answers over and over, each save a new value; remember what the server acknowledged."""

    def __init__(self, base_url: str, name: str, stop: threading.Event):
        super().__init__(daemon=True)
        self.base_url, self.name_, self.stop = base_url, name, stop
        self.acknowledged: dict[tuple[int, str], list[int]] = {}  # in the order the server confirmed them
        self.in_flight: tuple[tuple[int, str], int] | None = None  # sent, no answer: it may or may not be stored
        self.ready = threading.Event()
        self.error = ""

    def run(self) -> None:
        session = HttpSession(self.base_url, timeout=10)
        try:
            session.sign_in(self.name_)
            answers = session.answers(human_eval_questions(session))
        except Exception as exc:  # noqa: BLE001 (reported by the test)
            self.error = f"set-up: {exc!r}"
            return
        finally:
            self.ready.set()
        step = 0
        while not self.stop.is_set():
            key = answers[step % len(answers)]
            value = 1 + (step // len(answers) + hash(self.name_)) % 5  # differs from this answer's previous value
            step += 1
            self.in_flight = (key, value)
            try:
                status, body, *_ = session.save(key[0], key[1], value)
            except (OSError, http.client.HTTPException):
                return  # the server died with this save unanswered
            if status != 200 or not json.loads(body)["saved"] or not json.loads(body)["changed"]:
                self.error = f"{key}: {status} {body[:200]!r}"
                return
            self.acknowledged.setdefault(key, []).append(value)
            self.in_flight = None


@pytest.mark.slow
def test_no_acknowledged_score_is_lost_when_the_server_is_killed_mid_traffic(tmp_path):
    names = [f"crash-{i:02d}" for i in range(12)]
    instance = tmp_path / "instance"
    prepare_instance(instance, annotators=names)
    server = start_server(instance, {"LEVAL_WORKERS": "0"})
    stop = threading.Event()
    annotators = [Annotator(server.url, name, stop) for name in names]
    try:
        for annotator in annotators:
            annotator.start()
        for annotator in annotators:
            annotator.ready.wait(30)
        wait_until(lambda: sum(len(v) for a in annotators for v in a.acknowledged.values()) >= 400, 60,
                   "400 acknowledged saves")
        kill_9(server)
    finally:
        stop.set()
        if server.process.poll() is None:
            stop_server(server)
    for annotator in annotators:
        annotator.join(15)
        assert not annotator.error, f"{annotator.name_}: {annotator.error}"

    server = start_server(instance, {"LEVAL_WORKERS": "0"})
    try:
        if not on_postgres():  # a server database has no file of ours to check
            assert query(instance, "PRAGMA integrity_check") == [("ok",)]
        history: dict[tuple[str, int, str], list[int]] = {}
        for user, question, label, value in query(
                instance, "SELECT u.username, p.question_id, s.answer_label, r.new_value FROM score_revisions r "
                          "JOIN scores s ON s.id = r.score_id JOIN users u ON u.id = s.annotator_id "
                          "JOIN answers p ON p.id = s.answer_id ORDER BY r.id"):
            history.setdefault((user, question, label), []).append(value)
        current = {(user, question, label): value for user, question, label, value in query(
            instance, "SELECT u.username, p.question_id, s.answer_label, s.value FROM scores s "
                      "JOIN users u ON u.id = s.annotator_id JOIN answers p ON p.id = s.answer_id")}
        acknowledged = 0
        for annotator in annotators:
            for (question, label), values in annotator.acknowledged.items():
                key = (annotator.name_, question, label)
                acknowledged += len(values)
                stored = history.get(key, [])
                late = [annotator.in_flight[1]] if annotator.in_flight and annotator.in_flight[0] == (question, label) else []
                # Every acknowledged save is stored, in order; at most the one unanswered save follows it.
                assert stored in (values, values + late), (key, values, stored)
                assert current[key] == stored[-1]
        assert acknowledged >= 400 and len(current) == len(history)
        # The restarted server takes new saves.
        session = HttpSession(server.url)
        session.sign_in(names[0])
        (question, label), values = next(iter(annotators[0].acknowledged.items()))
        session.answers([question])  # opens the page, as the annotator would, and reads its answers
        value = 1 if current[(names[0], question, label)] != 1 else 2
        status, body, *_ = session.save(question, label, value)
        assert status == 200 and json.loads(body)["saved"]
    finally:
        stop_server(server)


# A locked database


LOCKER = r"""
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
con.execute("BEGIN IMMEDIATE")
con.execute("INSERT INTO settings (key, value, updated_at) VALUES ('held-by-another-process', 'x', CURRENT_TIMESTAMP)")
print("locked", flush=True)
sys.stdin.readline()
con.execute("COMMIT")
print("released", flush=True)
"""


@pytest.mark.slow
@pytest.mark.sqlite_only("a SQLite file locked by another process")
def test_a_locked_database_answers_a_retryable_503_and_loses_nothing(tmp_path):
    instance = tmp_path / "instance"
    prepare_instance(instance, annotators=["patient"])
    server = start_server(instance, {"LEVAL_WORKERS": "0", "LEVAL_BUSY_TIMEOUT_MS": "300"})
    locker = None
    try:
        session = HttpSession(server.url)
        session.sign_in("patient")
        question = human_eval_questions(session)[0]
        (question, label), *_ = session.answers([question])
        locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(instance / "leval.db")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert locker.stdout.readline().strip() == "locked"

        status, body, elapsed, _, headers = session.save(question, label, 4)
        assert status == 503, body
        answer = json.loads(body)
        assert answer["retryable"] is True and "Nothing was saved" in answer["error"]
        assert headers["Retry-After"] == "2"
        assert 250 <= elapsed < 5000, "the save waits the busy timeout, then gives up cleanly"
        assert session.page(f"/annotate/{session.study()}/q/{question}"), "reading goes on while another process writes"
        assert query(instance, "SELECT COUNT(*) FROM scores")[0][0] == 0
        assert query(instance, "SELECT COUNT(*) FROM score_revisions")[0][0] == 0

        locker.stdin.write("\n")
        locker.stdin.flush()
        assert locker.stdout.readline().strip() == "released"
        assert locker.wait(10) == 0
        status, body, *_ = session.save(question, label, 4)  # what the page's script does on 503
        assert status == 200 and json.loads(body)["saved"] is True
        assert query(instance, "SELECT value FROM scores") == [(4,)]
        assert query(instance, "SELECT old_value, new_value FROM score_revisions") == [(None, 4)]
        assert query(instance, "SELECT value FROM settings WHERE key = 'held-by-another-process'") == [("x",)]
    finally:
        if locker is not None and locker.poll() is None:
            locker.kill()
            locker.wait()
        stop_server(server)


# Damaged uploads are rejected whole


GOOD = demo_file("exam_eval/terse-13b/quality.pred.jsonl", "whole-7b")


def _damaged_member_zip() -> bytes:
    import io
    import zipfile

    archive = make_zip({"whole-7b/quality.pred.jsonl": GOOD,
                        "whole-7b/scientific_qa.pred.jsonl": demo_file("ngram_eval/terse-13b/scientific_qa.pred.jsonl",
                                                                       "whole-7b")})
    data = bytearray(archive)
    info = zipfile.ZipFile(io.BytesIO(archive)).infolist()[1]
    start = info.header_offset + 30 + len(info.filename)
    for offset in range(start + info.compress_size // 2, start + info.compress_size // 2 + 16):
        data[offset] ^= 0x5A
    return bytes(data)


def _lying_zip() -> bytes:
    """A zip whose central directory says a member is 10 bytes long: zipfile stops there and the CRC fails."""
    import io
    import struct
    import zipfile

    archive = bytearray(make_zip({"whole-7b/quality.pred.jsonl": GOOD}))
    info = zipfile.ZipFile(io.BytesIO(bytes(archive))).infolist()[0]
    central = archive.rfind(b"PK\x01\x02")
    struct.pack_into("<I", archive, central + 24, 10)  # uncompressed size in the central directory
    struct.pack_into("<I", archive, info.header_offset + 22, 10)  # and in the local header
    return bytes(archive)


DAMAGED = {
    "a zip with a damaged member": ("whole.zip", _damaged_member_zip(), "cannot be read"),
    "a zip cut short": ("whole.zip", make_zip({"whole-7b/quality.pred.jsonl": GOOD})[:-200], "not a valid zip archive"),
    "a zip that lies about a size": ("whole.zip", _lying_zip(), "cannot be read"),
    "a .jsonl cut mid-line": ("whole-7b.pred.jsonl", GOOD[: len(GOOD) - 40], "line 8"),
}


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_damaged_upload_is_rejected_whole(app, client, auth, case):
    name, data, message = DAMAGED[case]
    load_demo_data(app)
    auth.login("researcher")
    with app.app_context():
        systems = db.session.scalar(select(func.count(System.id)))
    batch = batch_id(post_upload(client, auth, [(name, data)]))
    page = client.get(f"/predictions/uploads/{batch}").get_data(as_text=True)
    assert message in page and "No file can be imported" in page
    confirm(client, auth, batch)
    with app.app_context():
        assert db.session.scalar(select(func.count(System.id))) == systems
        assert db.session.scalars(select(System).where(System.name == "whole-7b")).first() is None
    assert stored_files(app) == []
