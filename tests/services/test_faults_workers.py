"""Workers on several machines: `python run.py worker` processes sharing one PostgreSQL database.

Each worker has an instance folder of its own (as on another machine): the job queue they share
is the database's. A kill -9 of the worker running a metrics job leaves it `running`; the other
worker's periodic recovery re-queues it and resumes it, and the rows equal those of an
uninterrupted run of the same job on a copy of the database. A job the server submits afterwards
reaches the remaining worker through the shared queue.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT
from tests.support.databases import json_value
from tests.support.live import prepare_instance
from tests.support.predictions import demo_file
from tests.services.test_faults import (
    FRESH, FRESH_FILES, aggregate_rows, metric_rows, query, score_uninterrupted, submit_slow_metrics_job, wait_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def start_worker(folder, log) -> subprocess.Popen:
    env = {**os.environ, "LEVAL_INSTANCE": str(folder), "LEVAL_WORKERS": "1", "LEVAL_JOB_STALE_SECONDS": "5",
           "LEVAL_RECOVERY_SECONDS": "2", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "run.py", "worker"], cwd=REPO_ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)


def submit_metrics_job_now(instance, system: str) -> int:
    """Submit a metrics job as the server does: handed to the queue at once."""
    from sqlalchemy import select

    from app import create_app
    from app.extensions import db
    from app.models import System
    from app.services.metrics import submit_metrics_job

    app = create_app({"INSTANCE_PATH": instance})
    with app.app_context():
        job_id = submit_metrics_job(db.session.scalars(select(System).where(System.name == system)).one()).id
        db.session.remove()
        db.engine.dispose()
    return job_id


def stop(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        worker.send_signal(signal.SIGINT)
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def test_a_killed_worker_s_job_is_resumed_by_another_worker_with_identical_rows(tmp_path, postgres_database,
                                                                               clone_database):
    fresh = tmp_path / "fresh"
    for name, source in FRESH_FILES.items():
        (fresh / name).parent.mkdir(parents=True, exist_ok=True)
        (fresh / name).write_bytes(demo_file(source, FRESH))
    instance = tmp_path / "instance"
    prepare_instance(instance, folders=(fresh,))
    twin_database = clone_database()
    (system_id,) = query(instance, "SELECT id FROM systems WHERE name = ?", FRESH)[0]
    job_id = submit_slow_metrics_job(instance, FRESH, item_delay=0.25)  # queued; each worker's start hands it on

    log = (tmp_path / "workers.log").open("w")
    workers = {}
    try:
        for machine in ("machine-a", "machine-b"):
            worker = start_worker(tmp_path / machine, log)
            workers[worker.pid] = worker
        wait_until(lambda: query(instance, "SELECT 1 FROM jobs WHERE id = ? AND status = 'running' AND done >= 4",
                                 job_id), 90, "the job's first batches")
        (worker_id,) = query(instance, "SELECT worker_id FROM jobs WHERE id = ?", job_id)[0]
        running = workers.pop(int(worker_id.rpartition(":")[2]))
        os.kill(running.pid, signal.SIGKILL)
        running.wait(timeout=10)
        status, done, total = query(instance, "SELECT status, done, total FROM jobs WHERE id = ?", job_id)[0]
        assert status == "running" and 0 < done < total == 22, "killed mid-job"
        before = metric_rows(instance, system_id)
        assert 0 < len({pid for pid, _, _ in before}) < 22 and aggregate_rows(instance, system_id) == {}

        # The other worker recovers it at its next periodic recovery (every 2 s here), with no restart of anything.
        wait_until(lambda: query(instance, "SELECT 1 FROM jobs WHERE id = ? AND status IN ('done', 'failed')",
                                 job_id), 150, "the other worker to resume and finish the job")
        status, done, attempts, result, resumed_by = query(
            instance, "SELECT status, done, attempts, result, worker_id FROM jobs WHERE id = ?", job_id)[0]

        # A job the server submits now (into the queue, from its own machine) reaches the remaining worker.
        handed_on = submit_metrics_job_now(instance, "terse-13b")
        wait_until(lambda: query(instance, "SELECT 1 FROM jobs WHERE id = ? AND status = 'done'", handed_on), 60,
                   "the worker on another machine to run a newly submitted job")
    finally:
        for worker in workers.values():
            stop(worker)
        log.close()
    assert (status, done, attempts) == ("done", 22, 2), (tmp_path / "workers.log").read_text()[-3000:]
    assert resumed_by != worker_id
    assert json_value(result)["resumed_from"] == len({pid for pid, _, _ in before})
    after = metric_rows(instance, system_id)
    assert all(after[key] == row for key, row in before.items()), "items finished before the kill were recomputed"

    score_uninterrupted(tmp_path / "twin", twin_database)
    clean = metric_rows(tmp_path / "twin", system_id, twin_database)
    assert {k: v[0] for k, v in after.items()} == {k: v[0] for k, v in clean.items()} and len(clean) > 22 * 4
    assert aggregate_rows(instance, system_id) == aggregate_rows(tmp_path / "twin", system_id, twin_database) != {}
