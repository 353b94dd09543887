"""A job's LLM usage kept in its result row, so that a crash can only over-count it.

Each call is counted (at its reservation: more than it can cost) and committed before it is sent,
and corrected to its real usage when its reply arrives. A worker killed mid-call leaves the calls
in flight counted at their reservations; the resumed attempt starts from those totals, so its
budget is what is left after the worst case.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import update

from app.core.llm.batch import Call, Reply, Reservation, Usage
from app.extensions import db
from app.models import Job

# Cumulative over a job's attempts. reserved_*: calls counted at their reservation because their
# reply never arrived (their worker died), or that are in flight now. schema_fallbacks: calls whose
# response_format the server refused, sent again without it and read in the text format.
USAGE_KEYS = ("api_calls", "prompt_tokens", "completion_tokens", "cost_usd", "reserved_calls", "reserved_usd",
              "schema_fallbacks")
# True while any call is counted at its reservation: cost_usd (and the tokens) are then at most that much.
UPPER_BOUND_KEY = "cost_usd_is_upper_bound"


def cost_is_upper_bound(usage: dict[str, Any] | None) -> bool:
    """Whether a job's recorded cost is a ceiling rather than what was spent: some reservation never settled."""
    return bool((usage or {}).get("reserved_calls"))


def with_bound(usage: dict[str, Any]) -> dict[str, Any]:
    """The usage with its `cost_usd_is_upper_bound` flag, as every job result that records usage carries it."""
    return {**usage, UPPER_BOUND_KEY: cost_is_upper_bound(usage)}


def labelled(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stored job result as shown: results kept before the flag existed get it too."""
    if not result or "reserved_calls" not in result:
        return result
    return with_bound(result)


def previous_usage(job: Job | None) -> dict[str, Any]:
    """Return the usage a job recorded in earlier attempts (zeros for a new job; cost None stays None)."""
    result = (job.result if job is not None else None) or {}
    found = {key: result.get(key, 0) for key in USAGE_KEYS}
    found["reserved_usd"] = found["reserved_usd"] or 0.0
    return found


class JobUsageLedger:
    """The `ledger` of app.core.llm.batch.run_calls for a background job: writes usage into the job's result."""

    def __init__(self, job_id: int, before: dict[str, Any]) -> None:
        self.job_id = job_id
        self.totals = dict(before)

    def reserve(self, call: Call, held: Reservation) -> None:
        self._add(calls=1, prompt=held.prompt_tokens, completion=held.completion_tokens, cost=held.cost_usd,
                  reserved_calls=1, reserved=held.cost_usd)
        db.session.commit()  # durable before the call is sent

    def settle(self, call: Call, held: Reservation, reply: Reply, cost: float | None) -> None:
        """Replace the call's reservation by its usage; committed with the caller's next commit."""
        correction = None if cost is None else cost - (held.cost_usd or 0.0)
        self._add(calls=0, prompt=reply.prompt_tokens - held.prompt_tokens,
                  completion=reply.completion_tokens - held.completion_tokens, cost=correction,
                  reserved_calls=-1, reserved=None if held.cost_usd is None else -held.cost_usd,
                  refused=int(reply.schema_refused))

    def _add(self, *, calls: int, prompt: int, completion: int, cost: float | None, reserved_calls: int,
             reserved: float | None, refused: int = 0) -> None:
        totals = self.totals
        totals["api_calls"] += calls
        totals["schema_fallbacks"] = (totals.get("schema_fallbacks") or 0) + refused
        totals["prompt_tokens"] += prompt
        totals["completion_tokens"] += completion
        if cost is not None:  # None: a model without a price, counted in tokens only
            totals["cost_usd"] = (totals["cost_usd"] or 0.0) + cost
        totals["reserved_calls"] += reserved_calls
        if reserved is not None:
            totals["reserved_usd"] = max(0.0, totals["reserved_usd"] + reserved)
        db.session.execute(update(Job).where(Job.id == self.job_id)
                           .values(result={**with_bound(totals), "partial": True}))


def add_usage(before: dict[str, Any], usage: Usage) -> dict[str, Any]:
    """A job's usage after one more attempt: its earlier attempts' plus this one's, with the bound flag.

    cost_usd stays None for a model without a price (tokens only, then and now). Calls of crashed
    attempts whose replies never came stay counted at their reservations.
    """
    cost = None if usage.cost_usd is None else (before["cost_usd"] or 0.0) + usage.cost_usd
    return with_bound({"api_calls": before["api_calls"] + usage.api_calls,
                       "prompt_tokens": before["prompt_tokens"] + usage.prompt_tokens,
                       "completion_tokens": before["completion_tokens"] + usage.completion_tokens,
                       "cost_usd": cost,
                       "reserved_calls": before["reserved_calls"], "reserved_usd": before["reserved_usd"],
                       "schema_fallbacks": (before.get("schema_fallbacks") or 0) + usage.schema_fallbacks})


class CallsFailed(RuntimeError):
    """Some calls of an LLM job ended as error rows; the job fails so that resuming retries them."""


def finish_calls_job(job_id: int, result: dict[str, Any], *, stopped: str | None, errors: int, total: int,
                     noun: str) -> dict[str, Any]:
    """Store an LLM job's result, then end it as the judge's and the rater's jobs end: cancelled, failed with
    its error rows kept (a resume retries only them), or done."""
    from app.services.jobs.registry import JobCancelled

    db.session.execute(update(Job).where(Job.id == job_id).values(result=result))
    db.session.commit()
    if stopped == "cancelled":
        raise JobCancelled()
    if errors:
        raise CallsFailed(f"{errors} of {total} {noun} failed and were kept as error rows; resume to retry them")
    return result
