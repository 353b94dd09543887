"""The jobs blueprint; its routes live in this package's view modules."""
from flask import Blueprint

bp = Blueprint("jobs", __name__)


@bp.app_template_global()
def job_row_facts(job) -> dict:
    """What the jobs table shows beside progress: the system, start (UTC) and duration (services.jobs.listing)."""
    from ..services.jobs.listing import duration_text, job_seconds, job_system

    return {"system": job_system(job), "duration": duration_text(job_seconds(job)),
            "started": job.started_at.strftime("%Y-%m-%d %H:%M:%S") if job.started_at else ""}
