"""Several server processes on one PostgreSQL database: what they must share, they share.

Two `python run.py serve` processes on the same instance folder and database (as `serve
--processes 2` runs them, but each on a port of its own, so the test knows which one answers):
the sign-in limiter counts failures across both; a score saved through one is in the results the
other serves on the next request; and jobs queued before both started, which each start hands to
the queue again, each run exactly once. Then `serve --processes 2` itself: two children on one
port, the admin's password printed once.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from app import create_app
from app.extensions import db
from app.models import System
from app.services.metrics import submit_metrics_job
from tests.conftest import REPO_ROOT
from tests.e2e.conftest import ADMIN_RE, free_port, start_server, stop_server
from tests.support.live import ADMIN, HttpSession, human_eval_questions, instance_database, prepare_instance
from tests.services.test_faults import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def query(instance: Path, sql: str, *params) -> list[tuple]:
    with instance_database(instance) as con:
        return [tuple(row) for row in con.execute(sql, params).fetchall()]


def queue_metrics_jobs(instance: Path) -> list[int]:
    """Queue a metrics job per demo system without handing it to the queue: each server's start will."""
    app = create_app({"INSTANCE_PATH": instance})
    with app.app_context():
        ids = [submit_metrics_job(system, item_delay=0.01, enqueue=False).id
               for system in db.session.scalars(select(System).order_by(System.id))]
        db.session.remove()
        db.engine.dispose()
    return ids


def results(session: HttpSession) -> dict:
    status, body, *_ = session.request("GET", f"/results/export/results.json?study={session.study_id}")
    assert status == 200, body[:300]
    data = json.loads(body)
    data.pop("generated_at", None)
    return data


def wrong_password(base_url: str, username: str) -> int:
    session = HttpSession(base_url)
    status, page, *_ = session.request("GET", "/login")
    session.token = re.search(r'name="csrf-token" content="([^"]+)"', page.decode()).group(1)
    status, *_ = session.post_form("/login", {"username": username, "password": "not-the-password"})
    session.close()
    return status


def test_two_server_processes_share_the_limiter_the_results_and_the_jobs(tmp_path, postgres_database):
    instance = tmp_path / "instance"
    prepare_instance(instance, annotators=["ann"])
    jobs = queue_metrics_jobs(instance)
    assert len(jobs) >= 4
    first = start_server(instance, {"LEVAL_WORKERS": "2"})
    second = start_server(instance, {"LEVAL_WORKERS": "2"})
    try:
        # A score saved through the first is in the results the second serves next.
        researcher = HttpSession(second.url)
        researcher.sign_in(ADMIN)
        annotator = HttpSession(first.url)
        annotator.sign_in("ann")
        question = human_eval_questions(annotator)[0]
        (question, label), *_ = annotator.answers([question])
        researcher.study_id = annotator.study()
        before = results(researcher)
        assert results(researcher) == before  # the second process has it cached now
        status, body, *_ = annotator.save(question, label, 5)
        assert status == 200 and json.loads(body)["saved"], body
        after = results(researcher)
        assert after != before, "the second process served results from before the first process's save"
        assert query(instance, "SELECT value FROM scores") == [(5,)]

        # Every job ran exactly once, though both starts queued each of them.
        wait_until(lambda: query(instance, "SELECT COUNT(*) FROM jobs WHERE status IN ('done', 'failed')")[0][0]
                   == len(jobs), 120, "the queued jobs to finish")
        rows = query(instance, "SELECT status, attempts FROM jobs ORDER BY id")
        assert rows == [("done", 1)] * len(jobs), rows
        twins = query(instance, "SELECT COUNT(*) FROM (SELECT 1 FROM metric_results GROUP BY prediction_id, metric, "
                                "profile HAVING COUNT(*) > 1) AS twins")
        assert twins == [(0,)]

        # The sign-in limiter counts failures made on both: 5 + 5 reach the limit of 10.
        for base_url in [first.url, second.url] * 5:
            assert wrong_password(base_url, "ann") == 401  # the form again, with its error
        assert wrong_password(first.url, "ann") == 429
        assert wrong_password(second.url, "ann") == 429
    finally:
        stop_server(first)
        stop_server(second)


def test_serve_with_two_processes_answers_on_one_port_and_prints_the_password_once(tmp_path, postgres_database):
    port = free_port()
    env = {**os.environ, "LEVAL_INSTANCE": str(tmp_path / "instance"), "LEVAL_WORKERS": "1", "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen([sys.executable, "run.py", "serve", "--processes", "2", "--port", str(port)],
                               cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output: list[str] = []
    try:
        for line in process.stdout:
            output.append(line)
            if "is running at" in line:
                break
        base_url = f"http://127.0.0.1:{port}"
        wait_until(lambda: _healthy(base_url), 60, "both processes to answer")
        children = _children(process.pid)
        assert len(children) == 2, children
        for _ in range(10):
            assert wrong_password(base_url, "nobody-here") == 401
        assert wrong_password(base_url, "nobody-here") == 429
    finally:
        process.terminate()
        rest, _ = process.communicate(timeout=30)
        output.append(rest)
    assert process.returncode == 0, "".join(output)
    assert len(ADMIN_RE.findall("".join(output))) == 1


def _healthy(base_url: str) -> bool:
    session = HttpSession(base_url, timeout=5)
    try:
        return session.request("GET", "/healthz")[0] == 200
    except OSError:
        return False
    finally:
        session.close()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found
