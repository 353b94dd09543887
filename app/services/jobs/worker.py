"""The huey queue behind jobs: huey's SQLite file in the instance folder beside a SQLite database, the
database itself beside PostgreSQL (processes on several machines share it), or Redis by configuration."""
from __future__ import annotations

import logging
import threading
import traceback

from flask import Flask
from huey import RedisHuey, SqliteHuey, crontab
from huey.consumer import Consumer
from sqlalchemy import make_url, update

from app.extensions import db
from app.models import Job
from app.models.base import utcnow
from app.services.jobs.lifecycle import claim_job, finish_job, recover_jobs
from app.services.jobs.registry import JobCancelled, JobContext, handler_for

log = logging.getLogger("leval.jobs")
HEARTBEAT_SECONDS = 5.0


_QUEUE_LOCK = threading.Lock()


def queue_of(app: Flask):
    """The app's huey instance, made on first use: commands that queue nothing never import a driver for it."""
    huey = app.extensions.get("huey")
    if huey is None:
        with _QUEUE_LOCK:
            huey = app.extensions.get("huey") or make_huey(app)
    return huey


def make_huey(app: Flask):
    """Create the app's huey instance and register the job task on it."""
    url = app.config.get("LEVAL_QUEUE_URL") or ""
    database = app.config["SQLALCHEMY_DATABASE_URI"]
    if url.startswith("redis://"):
        huey = RedisHuey("leval", url=url, results=False)
    elif make_url(database).get_backend_name() == "postgresql":
        from app.services.jobs.database_queue import DatabaseHuey

        huey = DatabaseHuey("leval", url=database, results=False)
    else:
        huey = SqliteHuey("leval", filename=app.config["QUEUE_PATH"], results=False, timeout=30)

    @huey.task(name="run_job")
    def run_job_task(job_id: int) -> None:
        execute_job(app, job_id)

    # Every check of the consumer's scheduler runs it: each LEVAL_RECOVERY_SECONDS (see PacedConsumer).
    @huey.periodic_task(crontab(minute="*"), name="recover_jobs")
    def recover_task() -> None:
        with app.app_context():
            recover_jobs()

    app.extensions["huey"] = huey
    app.extensions["job_queue"] = run_job_task  # lifecycle enqueues through it
    return huey


def execute_job(app: Flask, job_id: int) -> None:
    """Claim and run one job in an app context, with a heartbeat thread beside it."""
    with app.app_context():
        job = claim_job(job_id)
        if job is None:
            return
        ctx = JobContext(job)
        stop = threading.Event()
        beat = threading.Thread(target=_heartbeat, args=(app, job_id, stop), daemon=True, name=f"heartbeat-{job_id}")
        beat.start()
        try:
            result = handler_for(job.kind)(ctx)
            finish_job(job_id, "done", result=result or {}, message="Finished")
        except JobCancelled:
            finish_job(job_id, "cancelled", message="Cancelled; resume to finish the remaining items")
        except Exception as exc:  # a failed job records why instead of killing the worker
            log.exception("job %s failed", job_id)
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            finish_job(job_id, "failed", error=detail, message="Failed")
        finally:
            stop.set()
            beat.join(timeout=HEARTBEAT_SECONDS)
            db.session.remove()


def _heartbeat(app: Flask, job_id: int, stop: threading.Event) -> None:
    interval = app.config.get("LEVAL_HEARTBEAT_SECONDS", HEARTBEAT_SECONDS)
    while not stop.wait(interval):
        with app.app_context():
            try:
                db.session.execute(
                    update(Job).where(Job.id == job_id, Job.status == "running").values(heartbeat_at=utcnow())
                )
                db.session.commit()
            except Exception:  # a busy database must not kill the heartbeat
                db.session.rollback()
                log.warning("heartbeat for job %s failed; will retry", job_id)
            finally:
                db.session.remove()


class PacedConsumer(Consumer):
    """A consumer whose scheduler checks the periodic tasks (job recovery) every `recovery_seconds`.

    Huey checks them once a minute; a lab may want a killed worker's job resumed sooner.
    """

    def __init__(self, huey, *, recovery_seconds: int, **options):
        self.recovery_seconds = max(int(recovery_seconds), 1)
        super().__init__(huey, **options)

    def _create_scheduler(self):
        scheduler = super()._create_scheduler()
        scheduler.periodic_task_seconds = self.recovery_seconds
        return scheduler


class EmbeddedConsumer(PacedConsumer):
    """A consumer that runs beside the web server: it leaves signal handling to the server."""

    def _set_signal_handlers(self) -> None:
        return None


def start_workers(app: Flask, workers: int) -> Consumer | None:
    """Start `workers` job threads in this process; recover jobs left by a crash first."""
    if workers <= 0:
        return None
    with app.app_context():
        recovered = recover_jobs(at_start=True)
    if recovered:
        log.warning("re-queued jobs left running by a stopped worker: %s", recovered)
    consumer = _consumer(app, EmbeddedConsumer, workers=workers, check_worker_health=True)
    consumer.start()
    return consumer


def run_worker(app: Flask, workers: int) -> None:
    """Run workers in the foreground until interrupted (`python run.py worker`)."""
    with app.app_context():
        recover_jobs(at_start=True)
    _consumer(app, PacedConsumer, workers=max(workers, 1)).run()


def _consumer(app: Flask, kind: type[PacedConsumer], **options) -> PacedConsumer:
    return kind(queue_of(app), recovery_seconds=app.config["LEVAL_RECOVERY_SECONDS"],
                worker_type="thread", periodic=True, initial_delay=0.05, max_delay=1.0, **options)
