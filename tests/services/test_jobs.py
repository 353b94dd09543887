"""Jobs: a real huey consumer runs them; progress, cancel, resume, duplicates and crash recovery."""
from __future__ import annotations

import re
import socket
import subprocess
import sys
import time

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Job, Setting
from app.services.jobs import DuplicateJob, cancel_job, recover_jobs, register_job_kinds, resume_job, submit_job
from app.services.jobs.worker import start_workers
from tests.support.jobs import wait_for_job

ITEMS = 6


def count_items(ctx):
    """Mark items done one by one, skipping finished ones, as real metric jobs do."""
    delay = ctx.params.get("delay", 0.0)
    done = {s.key for s in db.session.scalars(select(Setting).where(Setting.key.like(f"job{ctx.job_id}:%")))}
    for item in range(ITEMS):
        ctx.raise_if_cancelled()
        key = f"job{ctx.job_id}:{item}"
        if key not in done:
            time.sleep(delay)
            db.session.merge(Setting(key=key, value=str(item * item)))
        ctx.progress(item + 1, ITEMS, f"item {item}")
    return {"sum": sum(i * i for i in range(ITEMS))}


def always_fail(ctx):
    raise RuntimeError("the input file is broken")


@pytest.fixture(autouse=True)
def test_kinds(app):
    """Declare this module's job kinds on the app, as create_app declares the real ones."""
    register_job_kinds(app, {"test-count": count_items, "test-fail": always_fail})


def wait_for(app, job_id: int, statuses: tuple[str, ...], timeout: float = 15.0) -> Job:
    return wait_for_job(app, job_id, lambda job: job.status in statuses, timeout, str(statuses))


def submit(app, kind="test-count", **params) -> int:
    with app.app_context():
        return submit_job(kind, params).id


def test_worker_runs_job_to_completion(app, workers):
    job_id = submit(app)
    job = wait_for(app, job_id, ("done",))
    assert (job.done, job.total, job.result) == (ITEMS, ITEMS, {"sum": 55})
    assert job.started_at and job.finished_at and job.heartbeat_at and job.attempts == 1
    with app.app_context():
        values = db.session.scalars(select(Setting.value).where(Setting.key.like(f"job{job_id}:%"))).all()
        assert sorted(map(int, values)) == [i * i for i in range(ITEMS)]


def test_failure_is_recorded(app, workers):
    job = wait_for(app, submit(app, "test-fail"), ("failed",))
    assert "RuntimeError: the input file is broken" in job.error


def test_same_job_twice_is_refused(app):
    submit(app, delay=0.0)
    with app.app_context(), pytest.raises(DuplicateJob) as info:
        submit_job("test-count", {"delay": 0.0})
    assert "already queued" in str(info.value)
    with app.app_context():
        assert submit_job("test-count", {"delay": 0.01}).id  # other inputs are a new job


def test_unknown_kind_is_refused(app):
    with app.app_context(), pytest.raises(LookupError):
        submit_job("no-such-kind", {})


def test_cancel_then_resume_finishes_remaining_items(app, workers):
    job_id = submit(app, delay=0.2)
    wait_for(app, job_id, ("running",))
    time.sleep(0.5)
    with app.app_context():
        cancel_job(db.session.get(Job, job_id))
    job = wait_for(app, job_id, ("cancelled",))
    assert 0 < job.done < ITEMS
    with app.app_context():
        finished_before = db.session.scalars(select(Setting).where(Setting.key.like(f"job{job_id}:%"))).all()
        stamps = {s.key: s.updated_at for s in finished_before}
        resume_job(db.session.get(Job, job_id))
    job = wait_for(app, job_id, ("done",))
    assert job.result == {"sum": 55} and job.attempts == 2
    with app.app_context():
        for setting in db.session.scalars(select(Setting).where(Setting.key.in_(list(stamps)))):
            assert setting.updated_at == stamps[setting.key], "a finished item was recomputed"


def test_cancel_queued_job_is_immediate(app):
    job_id = submit(app)
    with app.app_context():
        job = cancel_job(db.session.get(Job, job_id))
        assert job.status == "cancelled"


def leave_running_by_a_dead_worker(app, job_id: int, **columns) -> None:
    """Mark the job running, claimed by a process of this machine that has exited (as after kill -9)."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with app.app_context():
        job = db.session.get(Job, job_id)
        job.status, job.worker_id = "running", f"{socket.gethostname()}:{dead.pid}"
        for name, value in columns.items():
            setattr(job, name, value)
        db.session.commit()


def test_job_of_a_dead_worker_is_recovered(app):
    job_id = submit(app)
    leave_running_by_a_dead_worker(app, job_id)
    consumer = start_workers(app, 1)  # recovery runs first, as on `python run.py` start
    try:
        job = wait_for(app, job_id, ("done",))
        assert job.result == {"sum": 55}
    finally:
        consumer.stop(graceful=True)


def test_a_running_consumer_recovers_each_recovery_interval(app):
    """A job whose worker dies after this consumer started is re-queued by its next periodic check."""
    app.config["LEVAL_RECOVERY_SECONDS"] = 1
    consumer = start_workers(app, 1)
    try:
        time.sleep(0.5)  # the start's own recovery has run and found nothing
        job_id = submit(app)
        job = wait_for(app, job_id, ("done",))
        leave_running_by_a_dead_worker(app, job_id, done=2)
        started = time.monotonic()
        job = wait_for(app, job_id, ("done",), timeout=10)
        assert job.attempts == 2 and "Re-queued" not in (job.message or "")  # finished again after the re-queue
        assert time.monotonic() - started < 5, "recovered by the 1-second check, not huey's minute"
    finally:
        consumer.stop(graceful=True)


def test_live_job_with_fresh_heartbeat_is_left_alone(app):
    job_id = submit(app)
    with app.app_context():
        job = db.session.get(Job, job_id)
        job.status, job.worker_id = "running", "another-host:1"
        from app.models.base import utcnow

        job.heartbeat_at = utcnow()
        db.session.commit()
        assert recover_jobs(at_start=True) == []
        assert db.session.get(Job, job_id).status == "running"


def test_jobs_pages_and_api(app, client, auth, workers):
    job_id = submit(app)
    wait_for(app, job_id, ("done",))
    auth.login("researcher")
    page = client.get("/jobs").get_data(as_text=True)
    assert f"#{job_id}" in page and "test-count" in page
    data = client.get(f"/jobs/api?ids={job_id}").get_json()
    assert data["jobs"][0]["status"] == "done" and data["jobs"][0]["fraction"] == 1.0
    assert client.get(f"/jobs/api/{job_id}").get_json()["result"] == {"sum": 55}


def test_jobs_are_staff_only(app, client, auth):
    job_id = submit(app)
    auth.login("annotator")
    assert client.get("/jobs").status_code == 403
    assert client.get(f"/jobs/api/{job_id}").status_code == 403
    token = auth.token()
    assert client.post(f"/jobs/{job_id}/cancel", data={"csrf_token": token}).status_code == 403


def test_jobs_list_names_systems_and_filters(app, client, auth, workers):
    from app.services.jobs.listing import duration_text

    alpha = submit(app, system="alpha")
    duel = submit(app, system="beta", baseline="alpha")
    failing = submit(app, "test-fail", system="gamma")
    for job_id in (alpha, duel):
        wait_for(app, job_id, ("done",))
    wait_for(app, failing, ("failed",))
    auth.login("researcher")

    def listed(query: str = "") -> dict[int, str]:
        page = client.get("/jobs" + query).get_data(as_text=True)
        rows = re.findall(r'<tr data-job-id="(\d+)".*?data-field="system">([^<]*)<', page, re.S)
        return {int(job_id): system for job_id, system in rows}

    assert listed() == {alpha: "alpha", duel: "beta vs alpha", failing: "gamma"}
    assert listed("?system=alpha") == {alpha: "alpha", duel: "beta vs alpha"}  # a baseline counts too
    assert listed("?kind=test-fail") == {failing: "gamma"}
    assert listed("?status=done&system=beta") == {duel: "beta vs alpha"}
    assert listed("?status=exploded&kind=nonsense") == listed()  # unknown filters are ignored
    assert "No job matches these filters." in client.get("/jobs?system=nobody").get_data(as_text=True)
    data = client.get(f"/jobs/api?ids={alpha}").get_json()["jobs"][0]
    assert data["system"] == "alpha" and re.fullmatch(r"\d+\.\d s", data["duration"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", data["started"])
    assert [duration_text(s) for s in (None, 0.25, 42.4, 185, 7620)] == ["—", "0.2 s", "42 s", "3 min 05 s",
                                                                        "2 h 07 min"]
