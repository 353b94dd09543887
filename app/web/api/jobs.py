"""API: background jobs: list them with filters, follow one, cancel and resume them (the Jobs page's actions)."""
from __future__ import annotations

from flask import abort, request

from app.extensions import db
from app.models import Job
from app.services.jobs import cancel_job, job_as_dict, resume_job
from app.services.jobs.listing import JobFilters, count_jobs, list_jobs
from app.services.llm.failures import job_for_viewer
from app.web.api.auth import access
from app.web.api.blueprint import bp
from app.web.api.paging import page_answer
from app.web.api.schemas import JobOut, JobPage, JobsQuery, Problem
from app.web.api.schemas.common import utc
from app.web.api.spec import operation
from app.web.errors import Problem as Refusal
from app.web.security import may_read_call_details

JOB_PATH = {"job_id": "The job's id (an upload's `jobs`, a run's `job`)"}


def job_out(job: Job) -> JobOut:
    """A job as the caller may read it: a failed LLM call's detail for admins only (as on the Jobs page)."""
    data = job_for_viewer(job_as_dict(job), detail=may_read_call_details())
    return JobOut(id=job.id, kind=job.kind, state=job.status, done=job.done or 0, total=job.total or 0,
                  progress=min(1.0, max(0.0, data["fraction"])), message=data["message"], error=data["error"],
                  cancel_requested=bool(job.cancel_requested), created_at=utc(job.created_at),
                  started_at=utc(job.started_at), finished_at=utc(job.finished_at), result=data["result"])


def _job(job_id: int) -> Job:
    return db.session.get(Job, job_id) or abort(404, description=f"no job with id {job_id}")


@bp.get("/jobs")
@access(write=False)
@operation("listJobs", query=JobsQuery, tags=["jobs"], resp={"HTTP_200": JobPage})
def jobs():
    """List the jobs, newest first, filtered as the Jobs page filters them.

    `kind`, `state` and `system` (a job about that system: its metrics, a judge run's system or baseline).
    """
    query: JobsQuery = request.context.query
    filters = JobFilters(kind=query.kind or "", status=query.state or "", system=query.system or "")
    found = list_jobs(filters, query.per_page, (query.page - 1) * query.per_page)
    return page_answer([job_out(job) for job in found], count_jobs(filters), query)


@bp.get("/jobs/<int:job_id>")
@access(write=False)
@operation("getJob", tags=["jobs"], resp={"HTTP_200": JobOut, "HTTP_404": Problem}, path=JOB_PATH)
def job(job_id: int):
    """A job's kind, state, progress and error.

    A job ends done, failed or cancelled: a poll loop waits while it is queued or running.
    """
    return job_out(_job(job_id))


@bp.post("/jobs/<int:job_id>/cancel")
@access(write=True)
@operation("cancelJob", tags=["jobs"], resp={"HTTP_200": JobOut, "HTTP_404": Problem}, path=JOB_PATH)
def cancel(job_id: int):
    """Cancel a job: a queued one at once, a running one between items (cancel_requested until it stops).

    A job that already ended is answered as it is.
    """
    return job_out(cancel_job(_job(job_id)))


@bp.post("/jobs/<int:job_id>/resume")
@access(write=True)
@operation("resumeJob", tags=["jobs"], resp={"HTTP_200": JobOut, "HTTP_404": Problem, "HTTP_409": Problem},
           path=JOB_PATH)
def resume(job_id: int):
    """Queue a cancelled or failed job again; items it finished are not computed again.

    Any other job is a 409.
    """
    found = _job(job_id)
    try:
        resume_job(found)
    except ValueError as exc:
        raise Refusal(409, str(exc), errors=[{"field": "job_id", "location": "path", "message": str(exc)}]) from None
    return job_out(found)
