"""What the predictions page lists: systems with their files and metric status, and recent metric jobs."""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import func, select

from app.core.text import lookalike_groups, matches_search, search_terms
from app.extensions import db
from app.models import Job, MetricAggregate, Prediction, PredictionFile, System, User
from app.models.corpus import LONG_ANSWER_HELD, LONG_ANSWER_SHOWN
from app.services.metrics.job import KIND as METRICS_KIND
from app.services.uploads.long_answers import long_answer_counts

RECENT_JOBS = 20


@dataclass
class SystemOverview:
    system: System
    predictions: int
    files: list[PredictionFile] = field(default_factory=list)
    scored: bool = False
    uploader: str = ""
    long_held: int = 0  # answers over the cap for human evaluation, not shown to annotators
    long_shown: int = 0  # the same, shown because a researcher chose to


def systems_overview() -> list[SystemOverview]:
    """Every system with its prediction count, files and whether metrics exist."""
    counts = dict(db.session.execute(
        select(Prediction.system_id, func.count()).group_by(Prediction.system_id)
    ).all())
    scored = scored_system_ids()
    usernames = dict(db.session.execute(select(User.id, User.username)).all())
    long = long_answer_counts()
    files: dict[int, list[PredictionFile]] = {}
    for pred_file in db.session.scalars(select(PredictionFile).order_by(PredictionFile.id)):
        files.setdefault(pred_file.system_id, []).append(pred_file)
    return [
        SystemOverview(system=system, predictions=counts.get(system.id, 0), files=files.get(system.id, []),
                       scored=system.id in scored, uploader=usernames.get(system.uploaded_by_id, ""),
                       long_held=long.get(system.id, {}).get(LONG_ANSWER_HELD, 0),
                       long_shown=long.get(system.id, {}).get(LONG_ANSWER_SHOWN, 0))
        for system in db.session.scalars(select(System).order_by(System.name))
    ]


STATUSES = ("scored", "not-scored")  # the systems list's filter, besides every system


@dataclass
class SystemsPage:
    rows: list[SystemOverview]  # the systems the filter keeps
    total: int  # every system
    lookalikes: list[list[str]]  # names that may be one model (core.text.lookalike_groups), among all systems


def systems_page(search: str = "", status: str = "") -> SystemsPage:
    """The predictions page's systems: those whose name has every word of `search`, scored or not as asked."""
    every = systems_overview()
    terms = search_terms(search)
    rows = [row for row in every if matches_search(terms, row.system.name)
            and (status not in STATUSES or row.scored == (status == "scored"))]
    return SystemsPage(rows=rows, total=len(every), lookalikes=lookalike_groups([row.system.name for row in every]))


def scored_system_ids() -> set[int]:
    """Systems that have metrics (any aggregate): the predictions page's "scored"."""
    return set(db.session.scalars(select(MetricAggregate.system_id).distinct()))


def metric_status() -> list[dict]:
    """Every system's metric status, as the predictions page polls it while metric jobs run."""
    scored = scored_system_ids()
    return [{"id": system_id, "name": name, "scored": system_id in scored}
            for system_id, name in db.session.execute(select(System.id, System.name).order_by(System.name))]


def metric_jobs(extra_ids: list[int] | None = None) -> list[Job]:
    """Recent metric jobs, plus any asked for by id (e.g. the ones an upload just queued)."""
    jobs = {job.id: job for job in db.session.scalars(
        select(Job).where(Job.kind == METRICS_KIND).order_by(Job.id.desc()).limit(RECENT_JOBS)
    )}
    if extra_ids:
        for job in db.session.scalars(select(Job).where(Job.id.in_(extra_ids))):
            jobs[job.id] = job
    return sorted(jobs.values(), key=lambda job: job.id, reverse=True)
