"""Generation runs: dry run, launch as a job, execute through the shared LLM layer, record.

Every successful call is stored under its content address the moment it lands, and every
answer as soon as its calls are in, so a run killed at any point resumes without repeating
a call whose reply was stored, and a re-run of the same content makes no call at all.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

from sqlalchemy import select

from app.core.generation import plan as plans
from app.core.generation.prompts import combine_fact
from app.core.llm import pricing
from app.core.llm.batch import Call, Reply, Usage, run_calls
from app.extensions import db
from app.models import GenerationRun, Job, System
from app.services.generation import store
from app.services.generation.spec import (
    JOB_KIND,
    GenerationError,
    Prepared,
    RunSpec,
    client_for,
    prepare,
)
from app.services.jobs import JobCancelled, JobContext, submit_job
from app.services.jobs.lifecycle import DuplicateJob, enqueue
from app.services.llm import prices as price_table
from app.services.llm.endpoints import SettingsError
from app.services.llm.failures import with_call_detail

USAGE_KEYS = ("api_calls", "cached", "errors", "prompt_tokens", "completion_tokens", "cost_usd")


class CallsFailed(RuntimeError):
    """Some calls failed after the client's retries; the job fails so that resuming retries them."""


def _prices():
    return price_table.load_prices()


def dry_run(spec: RunSpec) -> dict:
    """Estimate calls, tokens and cost without calling anything; stored calls and answers are free."""
    prepared = prepare(spec)
    keys = [k for q in prepared.run.questions for k in q.keys]
    estimate = plans.estimate(prepared.run, prepared.settings, cached_keys=set(store.cached_replies(keys)))
    prices = _prices()
    price = pricing.price_for(spec.model, prices)
    cost = None
    if price is not None:
        cost = (estimate["prompt_tokens"] * price.prompt_per_million
                + estimate["max_completion_tokens"] * price.completion_per_million) / 1_000_000
    return {**estimate, "cost_usd_at_most": cost, "tokenizer": prepared.counter.describe(),
            "manifest": prepared.manifest()}


def _check_budget(spec: RunSpec) -> None:
    try:
        price_table.require_price(spec.model, spec.budget_usd)
    except SettingsError as exc:
        raise GenerationError(f"budget: {exc}") from None


def create_run(prepared: Prepared, user_id: int | None, job_id: int | None = None) -> GenerationRun:
    store.check_system_name(prepared.spec.system_name, prepared.spec.existing_system)
    run = GenerationRun(job_id=job_id, system_name=prepared.spec.system_name, prompt_id=prepared.prompt.id,
                        spec=prepared.spec.params(), manifest=prepared.manifest(),
                        questions=len(prepared.run.questions), created_by_id=user_id)
    db.session.add(run)
    db.session.flush()
    store.system_for_run(run)
    return run


def launch(spec: RunSpec, user_id: int | None = None) -> tuple[GenerationRun, Job]:
    """Queue a generation job; raise GenerationError (bad spec, taken name) or DuplicateJob."""
    _check_budget(spec)
    prepared = prepare(spec)
    try:
        store.check_system_name(spec.system_name, spec.existing_system)
    except store.SystemConflict as exc:
        raise GenerationError(str(exc)) from None
    params = {**spec.params(), "prompt_id": prepared.prompt.id, "questions": prepared.question_fingerprint,
              "prompt_fingerprint": prepared.profile.fingerprint()}
    job = submit_job(JOB_KIND, params, user_id=user_id, total=len(prepared.run.questions), enqueue=False)
    run = create_run(prepared, user_id, job.id)
    job.is_demo = db.session.get(System, run.system_id).is_demo  # its system exists only now
    db.session.commit()
    enqueue(job.id)  # only now: the worker looks the run up by its job
    return run, job


@dataclass
class Outcome:
    usage: Usage
    answered: int = 0
    pending: int = 0
    reported_models: set[str] = field(default_factory=set)
    last_error: str | None = None


def execute(prepared: Prepared, run: GenerationRun, *, cancel: threading.Event | None = None,
            on_progress: Callable[[int, int], None] | None = None, client=None) -> Outcome:
    """Answer every question of the run not answered yet; store calls and answers as they land."""
    spec = prepared.spec
    system = db.session.get(System, run.system_id) if run.system_id else store.system_for_run(run)
    run_id, system_id = run.id, system.id  # plain ids: each answer's commit expires the ORM objects
    done_ids = store.answered_question_ids(run_id)
    current = store.current_predictions(system_id)
    todo = [q for q in prepared.run.questions if q.item.question_id not in done_ids]
    parts: dict[int, dict[int, str]] = {}
    by_id = {q.item.question_id: q for q in todo}
    outcome = Outcome(Usage())
    answered = len(prepared.run.questions) - len(todo)
    cached = store.cached_replies([k for q in todo for k in q.keys])
    for row in cached.values():
        if row.reported_model:
            outcome.reported_models.add(row.reported_model)

    def collect(question_id: int, part: int, text: str) -> None:
        nonlocal answered
        planned = by_id[question_id]
        got = parts.setdefault(question_id, {})
        got[part] = text.strip()
        if len(got) < len(planned.keys):
            return
        answer = got[0] if len(got) == 1 else combine_fact(got[0], got[1])
        store.store_answer(run_id, system_id, question_id, answer, planned.prompt.recorded_prompt,
                           planned.item.question.evaluation, current)
        answered += 1
        if on_progress is not None:
            on_progress(answered, len(prepared.run.questions))

    def from_cache(call: Call) -> bool:
        row = cached.get(call.key)
        if row is None:
            return False
        collect(*call.tag, row.reply)
        return True

    def on_reply(call: Call, reply: Reply, reused: bool) -> None:
        if not reply.ok:
            outcome.last_error = reply.error
            return
        if reply.model:
            outcome.reported_models.add(reply.model)
        if not reused:
            cached[call.key] = store.store_call(call.key, spec.model, prepared.settings.endpoint, reply, run_id)
        collect(*call.tag, reply.text)

    calls = [Call(key, [dict(m) for m in messages], (q.item.question_id, part))
             for q in todo
             for part, (key, messages) in enumerate(zip(q.keys, [q.prompt.messages, q.prompt.followup_messages()]))]
    if client is None:
        client = client_for(spec)
    outcome.usage = run_calls(
        client, calls, model=spec.model, on_reply=on_reply, from_cache=from_cache,
        temperature=float(spec.temperature), max_tokens=spec.max_tokens, seed=spec.seed,
        concurrency=spec.concurrency, budget_usd=spec.budget_usd,
        prices=_prices() if spec.budget_usd is not None else None, cancel=cancel,
    )
    outcome.answered = answered
    outcome.pending = len(prepared.run.questions) - answered
    run.answered = answered
    run.last_error = outcome.last_error
    reported = ", ".join(sorted(outcome.reported_models)) or None
    run.manifest = prepared.manifest(reported_model=reported)
    db.session.commit()
    return outcome


def usage_dict(usage: Usage, before: dict | None = None) -> dict:
    before = before or {}
    out = {}
    for key in USAGE_KEYS:
        now = getattr(usage, key)
        if key == "cost_usd":
            out[key] = None if now is None and before.get(key) is None else (before.get(key) or 0.0) + (now or 0.0)
        else:
            out[key] = (before.get(key) or 0) + now
    return out


def queue_metrics(system_id: int, user_id: int | None) -> int | None:
    """Queue the metrics job for the run's system; return its id (None when an identical one exists)."""
    from app.services.metrics.job import submit_metrics_job

    system = db.session.get(System, system_id)
    try:
        return submit_metrics_job(system, user_id=user_id).id
    except DuplicateJob as exc:
        return exc.job.id


def generate_job(ctx: JobContext) -> dict:
    """The "generate" job kind: run (or resume) the run this job belongs to."""
    run = db.session.scalars(select(GenerationRun).where(GenerationRun.job_id == ctx.job_id)).first()
    if run is None:
        raise RuntimeError(f"job #{ctx.job_id} has no generation run")
    spec = RunSpec.from_params(ctx.params)
    prepared = prepare(spec)
    job = db.session.get(Job, ctx.job_id)
    before = dict(job.result or {})
    cancel = threading.Event()

    def progress(done: int, total: int) -> None:
        ctx.progress(done, total, f"{done} of {total} questions answered")
        if ctx.cancelled():
            cancel.set()

    outcome = execute(prepared, run, cancel=cancel, on_progress=progress)
    result = {**usage_dict(outcome.usage, before), "answered": outcome.answered, "pending": outcome.pending,
              "run_id": run.id, "system": run.system_name, "stopped": outcome.usage.stopped}
    if outcome.answered:
        result["metrics_job"] = queue_metrics(run.system_id, ctx.created_by_id)
    job.result = result
    db.session.commit()
    if outcome.usage.stopped == "cancelled" or ctx.cancelled():
        raise JobCancelled()
    if outcome.pending and outcome.usage.stopped != "budget":
        raise CallsFailed(with_call_detail(f"{outcome.pending} questions have no answer yet; resume the job to retry them",
                                           outcome.last_error))
    return result
