"""Waiting on background jobs from tests."""
from __future__ import annotations

import time
from typing import Callable

from app.extensions import db
from app.models import Job


def wait_for_job(app, job_id: int, check: Callable[[Job], bool], timeout: float = 20.0,
                 what: str = "the expected state") -> Job:
    """Poll the job row until `check` holds; return it detached from the session."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with app.app_context():
            job = db.session.get(Job, job_id)
            if check(job):
                db.session.expunge(job)
                return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} never reached {what}")
