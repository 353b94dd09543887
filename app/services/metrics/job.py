"""The "metrics" background job: score one system's stored predictions under both profiles."""
from __future__ import annotations

from sqlalchemy import select

from app.core.metrics import PROFILES
from app.extensions import db
from app.models import MetricAggregate, Prediction, PredictionFile, System
from app.services.jobs import DuplicateJob, JobContext, submit_job
from app.services.metrics.compute import prediction_count, score_system

KIND = "metrics"
# Bump when scoring changes, so the same inputs may be scored again.
METRICS_VERSION = 2  # 2: LV-Eval scored as its evaluation.py does, dureader included


def metrics_params(system: System, *, evaluation: str | None = None, profiles: tuple[str, ...] = PROFILES,
                   item_delay: float = 0.0) -> dict:
    """Fingerprint a metrics run by its inputs: the system's files (sha256), the profiles and the scorer version.

    `item_delay` (seconds per prediction) slows a job down on purpose; fault tests use it.
    """
    files = sorted(db.session.scalars(select(PredictionFile.sha256).where(PredictionFile.system_id == system.id)))
    params = {"system_id": system.id, "system": system.name, "files": files, "profiles": list(profiles),
              "version": METRICS_VERSION}
    if evaluation:
        params["evaluation"] = evaluation
    if item_delay:
        params["item_delay"] = item_delay
    return params


def submit_metrics_job(system: System, *, user_id: int | None = None, evaluation: str | None = None,
                       item_delay: float = 0.0, enqueue: bool = True):
    """Queue a metrics job for a system; raises DuplicateJob when the same inputs were already scored or queued."""
    params = metrics_params(system, evaluation=evaluation, item_delay=item_delay)
    return submit_job(KIND, params, user_id=user_id, total=prediction_count(system.id), enqueue=enqueue)


def submit_for_systems(systems: list[System], *, user_id: int | None = None) -> tuple[list, list[DuplicateJob]]:
    """Queue one job per system; return (jobs, refusals)."""
    jobs, refused = [], []
    for system in systems:
        try:
            jobs.append(submit_metrics_job(system, user_id=user_id))
        except DuplicateJob as exc:
            refused.append(exc)
    return jobs, refused


def _systems_with_predictions():
    return select(System).where(System.id.in_(select(Prediction.system_id).distinct())).order_by(System.name)


def systems_with_predictions() -> list[System]:
    return list(db.session.scalars(_systems_with_predictions()))


def queue_unscored(*, user_id: int | None = None) -> list:
    """Queue a metrics job for every system whose current predictions are not scored or queued yet.

    Every way predictions arrive (an upload, `import-leval`, `import-lveval`, generation) ends here or in
    submit_for_systems, so no system is left unscored; a system already scored on the same inputs is skipped.
    """
    jobs, _already = submit_for_systems(systems_with_predictions(), user_id=user_id)
    return jobs


def run_metrics_job(ctx: JobContext) -> dict:
    system = db.session.get(System, ctx.params["system_id"])
    if system is None:
        raise LookupError(f"system #{ctx.params['system_id']} no longer exists")
    summary = score_system(
        system.id, profiles=tuple(ctx.params.get("profiles") or PROFILES), job_id=ctx.job_id,
        evaluation=ctx.params.get("evaluation"), report=lambda done, total, message: ctx.progress(done, total, message),
        check_cancelled=ctx.raise_if_cancelled, item_delay=float(ctx.params.get("item_delay") or 0),
    )
    return {"system": system.name, **summary}


def unscored_systems() -> list[System]:
    """Systems with predictions but no aggregate yet."""
    has_scores = select(MetricAggregate.system_id).distinct()
    return list(db.session.scalars(_systems_with_predictions().where(System.id.not_in(has_scores))))


def score_unscored_systems() -> list[str]:
    """Score, synchronously, every system that has predictions but no metrics (e.g. the demo on first start)."""
    names = []
    for system in unscored_systems():
        score_system(system.id)
        names.append(system.name)
    return names

