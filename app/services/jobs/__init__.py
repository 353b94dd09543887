"""Durable background jobs: a Job row per job (progress, heartbeat) executed through huey."""
from .lifecycle import (
    DuplicateJob,
    cancel_job,
    job_as_dict,
    recover_jobs,
    resume_job,
    submit_job,
)
from .registry import JobCancelled, JobContext, handler_for, register

__all__ = [
    "DuplicateJob", "JobCancelled", "JobContext", "cancel_job", "handler_for", "job_as_dict",
    "recover_jobs", "register", "resume_job", "submit_job",
]
