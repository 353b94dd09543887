"""The job queue, installed on the app without loading it: huey and its database driver load on the first
job queued (or when workers start), so commands that queue nothing start without them."""
from __future__ import annotations

from flask import Flask


def install_queue(app: Flask) -> None:
    """Give the app its `job_queue` callable; the first call builds the queue and hands the job on."""

    def enqueue_on_first_use(job_id: int) -> None:
        from app.services.jobs.worker import queue_of

        queue_of(app)  # replaces app.extensions["job_queue"] with the queue's own task
        app.extensions["job_queue"](job_id)

    app.extensions["job_queue"] = enqueue_on_first_use
