"""The jobs blueprint; its routes live in this package's view modules."""
from flask import Blueprint

bp = Blueprint("jobs", __name__)


@bp.app_template_global()
def job_row_facts(job) -> dict:
    """The jobs table's system, start and duration of a job (services.jobs.listing.job_facts)."""
    from app.services.jobs.listing import job_facts

    return job_facts(job)
