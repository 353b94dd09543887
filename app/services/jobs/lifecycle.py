"""Submitting, claiming, finishing, cancelling, resuming and recovering jobs."""
from __future__ import annotations

import hashlib
import json
import os
import socket
from datetime import timedelta

from flask import current_app
from sqlalchemy import select, update

from app.core.numbers import parse_whole_number
from app.extensions import db
from app.models import Job
from app.models.base import utcnow
from app.models.jobs import ACTIVE_STATUSES
from app.services.demo_scope import ALL_DATA, job_is_demo
from app.services.jobs.registry import handler_for


class DuplicateJob(Exception):
    def __init__(self, job: Job):
        self.job = job
        super().__init__(f"the same job is already {job.status} (job #{job.id})")


def params_hash(kind: str, params: dict) -> str:
    canonical = json.dumps({"kind": kind, "params": params}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def worker_identity() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def submit_job(kind: str, params: dict, *, user_id: int | None = None, total: int = 0, enqueue: bool = True) -> Job:
    """Create a queued job and hand it to the queue; refuse a twin of an active or finished job.

    Params should fingerprint the inputs (file hashes, prompt versions), so that changed
    inputs make a new job while a repeat on the same inputs is refused.
    """
    handler_for(kind)  # fail early on an unknown kind
    digest = params_hash(kind, params)
    twin = db.session.scalars(
        select(Job).where(Job.params_hash == digest, Job.status.in_(ACTIVE_STATUSES + ("done",))).limit(1)
        .execution_options(**{ALL_DATA: True})
    ).first()
    if twin is not None:
        raise DuplicateJob(twin)
    job = Job(kind=kind, params=params, params_hash=digest, status="queued", total=total,
              message="Waiting for a worker", created_by_id=user_id, is_demo=job_is_demo(params))
    db.session.add(job)
    db.session.commit()
    if enqueue:
        _enqueue(job.id)
    return job


def enqueue(job_id: int) -> None:
    """Hand a queued job (submitted with enqueue=False) to the queue."""
    _enqueue(job_id)


def _enqueue(job_id: int) -> None:
    # The app holds the queue (services.jobs.queue); reaching it here keeps this module free of huey.
    current_app.extensions["job_queue"](job_id)


def claim_job(job_id: int) -> Job | None:
    """Atomically move a queued job to running; None if someone else has it or it is over."""
    now = utcnow()
    result = db.session.execute(
        update(Job)
        .where(Job.id == job_id, Job.status == "queued")
        .values(status="running", started_at=now, heartbeat_at=now, worker_id=worker_identity(),
                attempts=Job.attempts + 1, message="Running")
    )
    db.session.commit()
    if result.rowcount != 1:
        return None
    return db.session.get(Job, job_id)


def finish_job(job_id: int, status: str, *, result: dict | None = None, error: str | None = None, message: str = "") -> None:
    values: dict = {"status": status, "finished_at": utcnow(), "heartbeat_at": utcnow(), "message": message}
    if result is not None:
        values["result"] = result
    if error is not None:
        values["error"] = error[:20000]
    db.session.rollback()
    db.session.execute(update(Job).where(Job.id == job_id).values(**values))
    db.session.commit()


def cancel_job(job: Job) -> Job:
    """Cancel a queued job at once; ask a running one to stop between items."""
    if job.status == "queued":
        job.status, job.cancel_requested, job.finished_at = "cancelled", True, utcnow()
        job.message = "Cancelled before it started"
    elif job.status == "running":
        job.cancel_requested = True
        job.message = "Cancelling…"
    db.session.commit()
    return job


def resume_job(job: Job) -> Job:
    """Queue a cancelled or failed job again; finished items are not recomputed."""
    if job.status not in ("cancelled", "failed"):
        raise ValueError(f"job #{job.id} is {job.status}; only cancelled or failed jobs resume")
    job.status, job.cancel_requested, job.error, job.finished_at = "queued", False, None, None
    job.message = "Resumed: waiting for a worker"
    db.session.commit()
    _enqueue(job.id)
    return job


def recover_jobs(*, at_start: bool = False) -> list[int]:
    """Re-queue running jobs whose worker died (stale heartbeat, or a dead local pid) and re-enqueue queued ones.

    Several processes recover at once (every server and worker, each LEVAL_RECOVERY_SECONDS): each job is
    re-queued with a compare-and-set on the worker and heartbeat it was seen with, so a job that
    another process recovered and a worker claimed meanwhile is left running, never queued twice.
    """
    stale_after = timedelta(seconds=current_app.config.get("LEVAL_JOB_STALE_SECONDS", 30))
    cutoff = utcnow() - stale_after
    running = db.session.execute(
        select(Job.id, Job.worker_id, Job.heartbeat_at, Job.attempts).where(Job.status == "running")
    ).all()
    db.session.commit()
    recovered = []
    for job_id, worker_id, seen_heartbeat, attempts in running:
        heartbeat = seen_heartbeat
        if heartbeat is not None and heartbeat.tzinfo is None:  # SQLite drops the zone
            heartbeat = heartbeat.replace(tzinfo=cutoff.tzinfo)
        if heartbeat is None or heartbeat < cutoff or _local_worker_is_dead(worker_id):
            same_claim = Job.heartbeat_at.is_(None) if seen_heartbeat is None else Job.heartbeat_at == seen_heartbeat
            result = db.session.execute(
                update(Job)
                .where(Job.id == job_id, Job.status == "running", Job.attempts == attempts, same_claim)
                .values(status="queued", message=f"Re-queued after its worker stopped (attempt {attempts})")
            )
            db.session.commit()
            if result.rowcount == 1:
                recovered.append(job_id)
    stmt = select(Job.id).where(Job.status == "queued")
    if not at_start:
        stmt = stmt.where(Job.id.in_(recovered))
    for job_id in db.session.scalars(stmt).all():
        _enqueue(job_id)
    return recovered


def _local_worker_is_dead(worker_id: str | None) -> bool:
    if not worker_id or ":" not in worker_id:
        return False
    host, _, pid_text = worker_id.rpartition(":")
    pid = parse_whole_number(pid_text, maximum=2 ** 31 - 1)
    if host != socket.gethostname() or not pid:
        return False
    if pid == os.getpid():
        return False  # this process runs it, or ran it before a restart in place
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def job_as_dict(job: Job) -> dict:
    """The JSON the jobs page polls."""
    from app.services.jobs.listing import job_facts
    from app.services.jobs.usage import labelled

    facts = job_facts(job)
    return {
        "id": job.id, "kind": job.kind, "system": facts["system"], "seconds": facts["seconds"],
        "duration": facts["duration"], "started": facts["started"], "status": job.status, "done": job.done,
        "total": job.total,
        "fraction": round(job.fraction, 4), "message": job.message, "error": job.error,
        "result": labelled(job.result), "cancel_requested": job.cancel_requested, "attempts": job.attempts,
        "created_at": _iso(job.created_at), "started_at": _iso(job.started_at),
        "finished_at": _iso(job.finished_at), "heartbeat_at": _iso(job.heartbeat_at),
    }


def _iso(value) -> str | None:
    return value.isoformat() if value else None
