"""The jobs list: what each job is about (its system), how long it ran, and the list's filters."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from flask import current_app
from sqlalchemy import func, or_, select

from app.extensions import db
from app.models import Job
from app.models.base import as_utc, utcnow

STATUSES = ("queued", "running", "done", "failed", "cancelled")


def job_system(job: Job) -> str:
    """Name what a job works on: its system (a judge run: system vs baseline), or its study."""
    params = job.params or {}
    system = params.get("system") or params.get("system_name")
    if system and params.get("baseline"):
        return f"{system} vs {params['baseline']}"
    if system:
        return str(system)
    if params.get("study_id") is not None:
        return f"study #{params['study_id']}"
    return ""


def job_seconds(job: Job, now: datetime | None = None) -> float | None:
    """Seconds from start to finish (to now while running); None before it starts."""
    if job.started_at is None:
        return None
    end = job.finished_at or (now or utcnow())
    return max(0.0, (as_utc(end) - as_utc(job.started_at)).total_seconds())


def duration_text(seconds: float | None) -> str:
    """1.2 s, 42 s, 3 min 05 s, 2 h 07 min; an em dash before the start."""
    if seconds is None:
        return "—"
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def job_facts(job: Job) -> dict:
    """What the jobs table shows beside progress: system, start (UTC), seconds and duration text."""
    seconds = job_seconds(job)
    return {"system": job_system(job), "seconds": seconds, "duration": duration_text(seconds),
            "started": job.started_at.strftime("%Y-%m-%d %H:%M:%S") if job.started_at else ""}


@dataclass(frozen=True)
class JobFilters:
    kind: str = ""
    status: str = ""
    system: str = ""

    @classmethod
    def from_args(cls, args) -> JobFilters:
        """Read ?kind=&status=&system=; unknown kinds and statuses are ignored."""
        kind = args.get("kind", "")
        status = args.get("status", "")
        return cls(kind=kind if kind in job_kinds() else "", status=status if status in STATUSES else "",
                   system=(args.get("system") or "").strip()[:200])

    @property
    def active(self) -> bool:
        return bool(self.kind or self.status or self.system)


def job_kinds() -> list[str]:
    """Every job kind declared on this app."""
    return sorted(current_app.extensions.get("job_kinds", {}))


def _filtered(stmt, filters: JobFilters):
    if filters.kind:
        stmt = stmt.where(Job.kind == filters.kind)
    if filters.status:
        stmt = stmt.where(Job.status == filters.status)
    if filters.system:
        stmt = stmt.where(or_(*(Job.params[key].as_string() == filters.system
                                for key in ("system", "system_name", "baseline"))))
    return stmt


def list_jobs(filters: JobFilters, limit: int, offset: int = 0) -> list[Job]:
    """The newest jobs that pass the filters (the system filter matches a judge run's system or baseline)."""
    return list(db.session.scalars(_filtered(select(Job), filters).order_by(Job.id.desc()).limit(limit)
                                   .offset(offset)))


def count_jobs(filters: JobFilters) -> int:
    """How many jobs pass the filters."""
    return db.session.scalar(_filtered(select(func.count(Job.id)), filters)) or 0


def job_system_names() -> list[str]:
    """The systems jobs were run for, for the filter's choices."""
    names: set[str] = set()
    for key in ("system", "system_name"):
        column = Job.params[key].as_string()
        names.update(name for name in db.session.scalars(select(column).where(column.is_not(None)).distinct()) if name)
    return sorted(names, key=str.lower)
