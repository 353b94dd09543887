"""What a failed LLM call may tell whom: admins read its detail, everyone else "the endpoint failed".

A failed call's detail (connection refused or reset, an HTTP status and the server's error text, a
timeout) tells an open port from a closed one and an HTTP server from anything else. Researchers
choose among endpoints an admin configured; they have no use for that detail, and showing it would
let them map the server's network through a run. So every page, JSON answer and flash shown to a
non-admin gives failed calls one text, whatever the network did. A reply that arrived but says
nothing usable (no verdict, no score) is about the model's text, which run pages show anyway:
everyone reads that problem.

The detail is stored whole (judgment and rating rows, a generation run's last error, a job's error);
it is shown through this module only.
"""
from __future__ import annotations

from typing import Any

from app.core.judge.runner import NO_VERDICT
from app.core.rater.runner import NO_SCORE

ENDPOINT_FAILED = "the endpoint failed"
# The app's own checks of a reply that arrived: they describe the model's text, not the network.
REPLY_PROBLEMS = frozenset({NO_VERDICT, NO_SCORE})
# Job kinds whose errors may carry a call's detail (see with_call_detail).
CALLING_JOB_KINDS = frozenset({"judge", "rater", "generate"})
_CALL_DETAIL = " [last failed call: "


def shown_call_error(error: str | None, *, detail: bool) -> str | None:
    """One call's stored error as this viewer may read it (`detail`: an admin)."""
    if error is None or detail or error in REPLY_PROBLEMS:
        return error
    return ENDPOINT_FAILED


def with_call_detail(message: str, call_error: str | None) -> str:
    """A job error's message followed by a failed call's detail, which shown_job_error keeps for admins."""
    return f"{message}{_CALL_DETAIL}{call_error}]" if call_error else message


def shown_job_error(kind: str, error: str | None, *, detail: bool) -> str | None:
    """A job's stored error as this viewer may read it: a call's detail in it becomes ENDPOINT_FAILED."""
    if error is None or detail or kind not in CALLING_JOB_KINDS:
        return error
    message, marked, call_error = error.partition(_CALL_DETAIL)
    if not marked:
        return message
    shown = shown_call_error(call_error[:-1] if call_error.endswith("]") else call_error, detail=False)
    return f"{message} [{shown}]"


def job_for_viewer(job: dict[str, Any], *, detail: bool) -> dict[str, Any]:
    """A job's JSON (services.jobs.job_as_dict) as this viewer may read it."""
    return {**job, "error": shown_job_error(job["kind"], job.get("error"), detail=detail)}
