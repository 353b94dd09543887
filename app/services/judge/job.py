"""Judge runs as background jobs: validate and launch, estimate (dry run), execute, record.

Job params fingerprint the judged texts and the prompt, so launching the same run twice is
refused while a run on changed predictions is a new job. Usage (calls, tokens, cost) is
cumulative over a job's attempts, and so is its budget: a resumed job spends only what is left.
Each call is counted before it is sent (app.services.jobs.usage), so a crash can only over-count.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from app.core.evidence import check_max_quotes
from app.core.judge import (
    CostEstimate,
    JudgmentResult,
    PromptTemplate,
    RunSummary,
    estimate,
    price_for,
    run_judgments,
)
from app.core.judge.profiles import JudgeProfile, get_profile
from app.core.judge.prompt import is_evidence
from app.extensions import db
from app.models import Job, JudgePrompt
from app.models.base import utcnow
from app.services.demo_scope import job_is_demo
from app.services.jobs import JobContext, submit_job
from app.services.jobs.lifecycle import params_hash
from app.services.jobs.usage import (
    JobUsageLedger,
    add_usage,
    finish_calls_job,
    previous_usage,
)
from app.services.judge.db_cache import DBJudgeCache
from app.services.judge.evidence import quote_checker, with_documents
from app.services.judge.pairs import (
    JudgePair,
    PairError,
    build_pairs,
    inputs_fingerprint,
    system_named,
)
from app.services.judge.prompt_versions import as_template, get_prompt
from app.services.judge.reports import JOB_KIND, RunSpec
from app.services.judge.settings import (
    JudgeSettings,
    check_concurrency,
    load_settings,
    require_endpoint,
)
from app.services.llm import call_cache
from app.services.llm.endpoints import SettingsError
from app.services.llm.evidence import EvidenceDocuments
from app.services.llm.prices import require_price


class JudgeRunError(ValueError):
    """A run that cannot be launched as asked."""


@dataclass
class PreparedRun:
    """A checked run: its spec, prompt version, current pairs and the settings to call with."""

    spec: RunSpec
    prompt: JudgePrompt
    pairs: list[JudgePair]
    settings: JudgeSettings
    system_id: int | None
    baseline_id: int | None
    documents: EvidenceDocuments | None = None  # the evidence profile's, each cut to the judge's context

    @property
    def template(self) -> PromptTemplate:
        return as_template(self.prompt)

    @property
    def profile(self) -> JudgeProfile:
        return self.spec.judge_profile

    def cache(self, job_id: int | None = None) -> DBJudgeCache:
        return DBJudgeCache.for_pairs(self.pairs, judge_model=self.spec.judge_model, prompt_id=self.prompt.id,
                                      temperature=self.spec.temperature, system_id=self.system_id,
                                      baseline_id=self.baseline_id, job_id=job_id,
                                      check_quotes=quote_checker(self.pairs, self.documents) if self.documents else None)


def check_options(spec: RunSpec, prompt: JudgePrompt | None, *, budget_usd: float | None,
                  settings: JudgeSettings) -> JudgeProfile:
    """The checks every run passes, launched from a page, a job or the command line: a model, a temperature
    in range, a prompt and temperature its profile allows, and a price when there is a USD budget."""
    if not spec.judge_model.strip():
        raise JudgeRunError("name the judge model")
    if not 0.0 <= spec.temperature <= 2.0:
        raise JudgeRunError("temperature must be between 0 and 2")
    if prompt is None:
        raise JudgeRunError(f"no prompt #{spec.prompt_id}")
    profile = check_profile(spec, prompt)
    try:
        check_max_quotes(spec.max_quotes)
        require_price(spec.judge_model, budget_usd, settings.prices)
    except (SettingsError, ValueError) as exc:
        raise JudgeRunError(str(exc)) from None
    return profile


def prepare_run(spec: RunSpec, *, budget_usd: float | None = None) -> PreparedRun:
    """Check a spec and collect its pairs; raise JudgeRunError with a reason to show."""
    prompt = get_prompt(spec.prompt_id)
    settings = load_settings()
    check_options(spec, prompt, budget_usd=budget_usd, settings=settings)
    try:
        system, baseline = system_named(spec.system), system_named(spec.baseline)
        pairs = build_pairs(system, baseline, spec.scope, spec.profile)
    except PairError as exc:
        raise JudgeRunError(str(exc)) from None
    if not pairs:
        raise JudgeRunError(f"{spec.system} and {spec.baseline} answered no common question in this scope")
    documents = None
    if spec.judge_profile.shows_document:
        try:
            pairs, documents = with_documents(pairs, as_template(prompt), spec.judge_model, spec.judge_profile,
                                              spec.context_tokens)
        except ValueError as exc:
            raise JudgeRunError(f"context tokens: {exc}") from None
    return PreparedRun(spec, prompt, pairs, settings, system.id, baseline.id, documents)


def check_profile(spec: RunSpec, prompt: JudgePrompt) -> JudgeProfile:
    """Refuse a run its profile does not allow: another prompt or temperature than a fixed one."""
    try:
        profile = get_profile(spec.profile)
    except ValueError as exc:
        raise JudgeRunError(str(exc)) from None
    profile = profile.with_evidence_options(spec.max_quotes, spec.json_schema)
    fixed = profile.template
    if profile.shows_document != is_evidence(as_template(prompt)):
        raise JudgeRunError(f"the {profile.name} profile needs a prompt version that "
                            f"{'shows' if profile.shows_document else 'does not show'} the {{document}}")
    if fixed is not None and as_template(prompt).fingerprint() != fixed.fingerprint():
        raise JudgeRunError(f"the {profile.name} profile judges with its own prompt ({fixed.name}) only")
    if profile.temperature is not None and spec.temperature != profile.temperature:
        raise JudgeRunError(f"the {profile.name} profile judges at temperature {profile.temperature:g} only, "
                            "as the reference script does")
    return profile


def dry_run(spec: RunSpec) -> dict[str, Any]:
    """Estimate calls, tokens and cost of a run without calling the API; cached judgments are free."""
    run = prepare_run(spec)
    estimated: CostEstimate = estimate(
        [pair.item for pair in run.pairs], run.template, spec.judge_model, prices=run.settings.prices,
        cache=run.cache(), temperature=spec.temperature, profile=run.profile,
    )
    return {**estimated, "pairs": len(run.pairs), "judgments": 2 * len(run.pairs),
            "truncation": run.documents.record() if run.documents else None,
            "priced": price_for(spec.judge_model, run.settings.prices) is not None}


def job_params(run: PreparedRun, *, concurrency: int, budget_usd: float | None, source: str = "web") -> dict:
    """Return a judge job's params: the spec, how to run it, and a fingerprint of what it judges."""
    return {**run.spec.params(), "concurrency": concurrency, "budget_usd": budget_usd, "pairs": len(run.pairs),
            "fingerprint": inputs_fingerprint(run.pairs, run.template), "source": source}


def launch(spec: RunSpec, *, concurrency: int, budget_usd: float | None, user_id: int | None = None) -> Job:
    """Queue a judge job; raises JudgeRunError, or DuplicateJob for a twin of an active or finished job."""
    try:
        check_concurrency(concurrency)
    except ValueError as exc:
        raise JudgeRunError(str(exc)) from None
    run = prepare_run(spec, budget_usd=budget_usd)
    try:
        require_endpoint(run.settings)
    except SettingsError as exc:
        raise JudgeRunError(str(exc)) from None
    params = job_params(run, concurrency=concurrency, budget_usd=budget_usd)
    return submit_job(JOB_KIND, params, user_id=user_id, total=2 * len(run.pairs))


def summary_result(summary: RunSummary, usage: dict[str, Any], pairs: int) -> dict[str, Any]:
    """Return a job's result: the CLI's keys (usage cumulative) plus consistency, interval and stop reason."""
    agg = summary.aggregate()
    return {**summary.to_cli_json(agg), **usage, "consistency": agg.consistency, "ci_low": agg.ci_low,
            "ci_high": agg.ci_high, "pairs": pairs, "skipped": summary.skipped, "stopped": summary.stopped}


def execute(run: PreparedRun, *, concurrency: int, budget_usd: float | None, job_id: int | None = None,
            on_progress: Callable[[int, JudgmentResult], None] | None = None,
            cancel: threading.Event | None = None, ledger: JobUsageLedger | None = None) -> RunSummary:
    """Judge a prepared run through the API with the DB cache; every call's row is committed as it lands."""
    cache = run.cache(job_id)
    on_result = call_cache.commit_each(cache.record, on_progress)

    return run_judgments(
        run.settings.client(), [pair.item for pair in run.pairs], model=run.spec.judge_model,
        template=run.template, cache=cache, temperature=run.spec.temperature, concurrency=concurrency,
        budget_usd=budget_usd, prices=run.settings.prices, cancel=cancel, on_result=on_result, profile=run.profile,
        ledger=ledger,
    )


def judge_job(ctx: JobContext) -> dict[str, Any]:
    """Run (or resume) a judge job; cached judgments cost nothing, so resuming redoes only what is missing."""
    params = ctx.params
    spec = RunSpec.from_params(params)
    run = prepare_run(spec)
    if inputs_fingerprint(run.pairs, run.template) != params.get("fingerprint"):
        raise JudgeRunError("the predictions or the prompt changed since this job was launched; launch a new run")
    job = db.session.get(Job, ctx.job_id)
    # Usage of earlier attempts, calls lost in flight by a crash counted at their reservations.
    before = previous_usage(job)
    budget = params.get("budget_usd")
    remaining = None if budget is None else max(0.0, float(budget) - (before["cost_usd"] or 0.0))
    total = 2 * len(run.pairs)
    ctx.progress(0, total, f"Judging {len(run.pairs)} pairs in both orders")
    cancel = threading.Event()

    def on_progress(done: int, result: JudgmentResult) -> None:
        ctx.progress(done, total, f"{done} of {total} judgments", commit=False)
        if ctx.cancelled():
            cancel.set()

    summary = execute(run, concurrency=int(params.get("concurrency", 8)), budget_usd=remaining,
                      job_id=ctx.job_id, on_progress=on_progress, cancel=cancel,
                      ledger=JobUsageLedger(ctx.job_id, before))
    result = summary_result(summary, add_usage(before, summary), len(run.pairs))
    if run.documents is not None:
        result["truncation"] = run.documents.record()
    return finish_calls_job(ctx.job_id, result, stopped=summary.stopped, errors=summary.errors, total=total,
                            noun="judgments")


def record_finished_run(run: PreparedRun, summary: RunSummary, *, concurrency: int, budget_usd: float | None,
                        user_id: int | None = None) -> Job:
    """Record a command-line run as a finished judge job, so the judge pages and win rates list it."""
    params = job_params(run, concurrency=concurrency, budget_usd=budget_usd, source="cli")
    digest = params_hash(JOB_KIND, params)
    job = db.session.scalars(
        select(Job).where(Job.params_hash == digest, Job.status.in_(("done", "failed", "cancelled")))
        .order_by(Job.id.desc()).limit(1)
    ).first()
    if job is None:
        job = Job(kind=JOB_KIND, params=params, params_hash=digest, created_by_id=user_id, started_at=utcnow(),
                  is_demo=job_is_demo(params))
        db.session.add(job)
    total = 2 * len(run.pairs)
    failed = summary.errors > 0
    job.result = summary_result(summary, add_usage(previous_usage(job), summary), len(run.pairs))
    job.status = "failed" if failed else "done"
    job.error = (f"{summary.errors} of {total} judgments failed and were kept as error rows; resume to retry them"
                 if failed else None)
    job.done, job.total, job.attempts = len(summary.results), total, (job.attempts or 0) + 1
    job.message = "Finished (command line)"
    job.finished_at = job.heartbeat_at = utcnow()
    db.session.commit()
    return job
