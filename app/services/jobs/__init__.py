"""Durable background jobs: a Job row per job (progress, heartbeat) executed through huey.

`lifecycle` submits, claims, finishes and recovers jobs; `worker` runs them; `registry` maps
job kinds (declared in create_app) to their handlers and gives handlers their JobContext.
"""
from app.services.jobs.lifecycle import (
    DuplicateJob,
    cancel_job,
    job_as_dict,
    recover_jobs,
    resume_job,
    submit_job,
)
from app.services.jobs.registry import (
    JobCancelled,
    JobContext,
    handler_for,
    register_job_kinds,
)

__all__ = [
    "DuplicateJob", "JobCancelled", "JobContext", "cancel_job", "handler_for", "job_as_dict",
    "recover_jobs", "register_job_kinds", "resume_job", "submit_job",
]
