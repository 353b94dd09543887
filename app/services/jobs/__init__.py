"""Durable background jobs: a Job row per job (progress, heartbeat) executed through huey.

`lifecycle` submits, claims, finishes and recovers jobs; `worker` runs them; `registry` maps
job kinds (declared in create_app) to their handlers and gives handlers their JobContext.

The names below load their module on first use (PEP 562): create_app imports `jobs.queue` and
`jobs.registry` on every start, and a quick command should not pay for the lifecycle's imports.
"""
from __future__ import annotations

import importlib

_HOMES = {
    "DuplicateJob": "lifecycle", "cancel_job": "lifecycle", "job_as_dict": "lifecycle",
    "recover_jobs": "lifecycle", "resume_job": "lifecycle", "submit_job": "lifecycle",
    "JobCancelled": "registry", "JobContext": "registry", "handler_for": "registry",
    "register_job_kinds": "registry",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
