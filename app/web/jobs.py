"""The jobs page and its polling endpoints."""
from __future__ import annotations

from flask import (
    Blueprint,
    abort,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from sqlalchemy import select

from app.extensions import db
from app.models import Job
from app.services.jobs import cancel_job, job_as_dict, resume_job
from app.services.jobs.listing import (
    STATUSES,
    JobFilters,
    job_kinds,
    job_system_names,
    list_jobs,
)
from app.services.llm.failures import job_for_viewer
from app.web.routing import comma_ids
from app.web.security import may_read_call_details, staff_required

bp = Blueprint("jobs", __name__)


@bp.app_template_global()
def job_row_facts(job) -> dict:
    """The jobs table's system, start and duration of a job (services.jobs.listing.job_facts)."""
    from app.services.jobs.listing import job_facts

    return job_facts(job)


@bp.app_template_global()
def cost_is_upper_bound(result) -> bool:
    """Whether a job result's cost is a ceiling (services.jobs.usage.cost_is_upper_bound)."""
    from app.services.jobs.usage import cost_is_upper_bound as upper_bound

    return upper_bound(result)


@bp.app_template_global()
def job_description(job) -> str:
    """What a job does, in words (services.jobs.describe.describe_job)."""
    from app.services.jobs.describe import describe_job

    return describe_job(job)


PAGE_SIZE = 100


def _job_or_404(job_id: int) -> Job:
    job = db.session.get(Job, job_id)
    if job is None:
        abort(404)
    return job


@bp.get("")
@staff_required
def index():
    filters = JobFilters.from_args(request.args)
    return render_template("jobs/index.html", jobs=list_jobs(filters, PAGE_SIZE), filters=filters,
                           kinds=job_kinds(), statuses=STATUSES, systems=job_system_names())


@bp.get("/<int:job_id>")
@staff_required
def detail(job_id: int):
    return render_template("jobs/detail.html", job=_job_or_404(job_id))


@bp.get("/api")
@staff_required
def api_list():
    ids = comma_ids(request.args.get("ids"))
    stmt = select(Job).order_by(Job.id.desc())
    stmt = stmt.where(Job.id.in_(ids)) if ids else stmt.limit(PAGE_SIZE)
    return jsonify(jobs=[_as_json(job) for job in db.session.scalars(stmt)])


def _as_json(job: Job) -> dict:
    """A job's JSON as the signed-in user may read it: a failed call's detail for admins only."""
    return job_for_viewer(job_as_dict(job), detail=may_read_call_details())


@bp.get("/api/<int:job_id>")
@staff_required
def api_detail(job_id: int):
    return jsonify(_as_json(_job_or_404(job_id)))


@bp.post("/<int:job_id>/cancel")
@staff_required
def cancel(job_id: int):
    job = cancel_job(_job_or_404(job_id))
    if request.is_json:
        return jsonify(_as_json(job))
    flash(f"Job #{job.id}: {job.message}", "info")
    return redirect(request.referrer or url_for("jobs.index"))


@bp.post("/<int:job_id>/resume")
@staff_required
def resume(job_id: int):
    job = _job_or_404(job_id)
    try:
        resume_job(job)
    except ValueError as exc:
        if request.is_json:
            return jsonify(error=str(exc)), 409
        flash(str(exc), "error")
        return redirect(url_for("jobs.index"))
    if request.is_json:
        return jsonify(_as_json(job))
    flash(f"Job #{job.id} resumed.", "info")
    return redirect(request.referrer or url_for("jobs.index"))
