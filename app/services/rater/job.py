"""Rater runs as background jobs: validate and launch, estimate (dry run), execute, record usage.

A run is a study, a rater model, a prompt version and a temperature; its params fingerprint the
rendered prompts, so a run on changed answers or references is a new job, and a repeat is refused.
Usage (calls, tokens, cost) and the budget are cumulative over a job's attempts, as for the judge.
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, replace
from typing import Any

from app.core.evidence import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_MAX_QUOTES,
    check_max_quotes,
)
from app.core.evidence import PROFILE as EVIDENCE
from app.core.llm.pricing import estimate_calls, price_for
from app.core.rater import (
    EvidenceOptions,
    RaterTemplate,
    RatingResult,
    RatingSummary,
    is_evidence,
    messages_and_key,
    run_ratings,
)
from app.core.rubric import RUBRIC
from app.extensions import db
from app.models import Job, RaterPrompt, Study
from app.services.jobs import JobContext, submit_job
from app.services.jobs.usage import (
    JobUsageLedger,
    add_usage,
    finish_calls_job,
    previous_usage,
)
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
from app.services.rater.db_cache import DBRatingCache
from app.services.rater.items import StudyItem, study_items
from app.services.rater.prompts import as_template, get_rater_prompt

JOB_KIND = "rater"
REFERENCE = "reference"  # the profile without the document
PROFILES = (REFERENCE, EVIDENCE)


class RaterRunError(ValueError):
    """A run that cannot be launched as asked."""


@dataclass(frozen=True)
class RaterSpec:
    study_id: int
    rater_model: str
    prompt_id: int
    temperature: float = 0.0
    profile: str = REFERENCE
    max_quotes: int = DEFAULT_MAX_QUOTES  # the evidence profile's: quotes per answer
    context_tokens: int = DEFAULT_CONTEXT_TOKENS  # the evidence profile's: the rater model's context
    json_schema: bool = True  # the evidence profile's: ask for JSON through response_format

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> RaterSpec:
        return cls(int(params["study_id"]), str(params["rater_model"]), int(params["prompt_id"]),
                   float(params.get("temperature", 0.0)), str(params.get("profile", REFERENCE)),
                   int(params.get("max_quotes", DEFAULT_MAX_QUOTES)),
                   int(params.get("context_tokens", DEFAULT_CONTEXT_TOKENS)), bool(params.get("json_schema", True)))

    @property
    def evidence(self) -> EvidenceOptions | None:
        return EvidenceOptions(self.max_quotes, self.json_schema) if self.profile == EVIDENCE else None

    def params(self) -> dict[str, Any]:
        """The job's params; a reference-only run's are what they always were."""
        params = {"study_id": self.study_id, "rater_model": self.rater_model, "prompt_id": self.prompt_id,
                  "temperature": self.temperature}
        if self.profile == EVIDENCE:
            params.update(profile=EVIDENCE, max_quotes=self.max_quotes, context_tokens=self.context_tokens,
                          json_schema=self.json_schema)
        return params


@dataclass
class PreparedRating:
    spec: RaterSpec
    study: Study
    prompt: RaterPrompt
    items: list[StudyItem]
    settings: JudgeSettings
    documents: EvidenceDocuments | None = None  # the evidence profile's, each cut to the context

    @property
    def template(self) -> RaterTemplate:
        return as_template(self.prompt)

    def _sent(self, item: StudyItem) -> tuple[list[dict[str, str]], str]:
        return messages_and_key(item.item, model=self.spec.rater_model, temperature=self.spec.temperature,
                                template=self.template, rubric=RUBRIC, evidence=self.spec.evidence)

    def messages(self, item: StudyItem) -> list[dict[str, str]]:
        return self._sent(item)[0]

    def key(self, item: StudyItem) -> str:
        return self._sent(item)[1]

    def cache(self, job_id: int | None = None) -> DBRatingCache:
        check = None
        if self.documents is not None:
            document_of = {item.answer_id: item.document_id for item in self.items}
            check = lambda result: self.documents.check(document_of[result.item_id], result.quotes)
        return DBRatingCache(self.spec.rater_model, self.prompt.id, self.spec.temperature, job_id, check)

    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for item in self.items:
            digest.update(self.key(item).encode())
        return digest.hexdigest()


def prepare(spec: RaterSpec, *, budget_usd: float | None = None) -> PreparedRating:
    """Check a spec and collect the study's items; raise RaterRunError with a reason to show."""
    if not spec.rater_model.strip():
        raise RaterRunError("name the rater model")
    if not 0.0 <= spec.temperature <= 2.0:
        raise RaterRunError("temperature must be between 0 and 2")
    study = db.session.get(Study, spec.study_id)
    if study is None:
        raise RaterRunError(f"no study #{spec.study_id}")
    prompt = get_rater_prompt(spec.prompt_id)
    if prompt is None:
        raise RaterRunError(f"no rater prompt #{spec.prompt_id}")
    settings = load_settings()
    try:
        require_price(spec.rater_model, budget_usd, settings.prices)
    except SettingsError as exc:
        raise RaterRunError(str(exc)) from None
    items = study_items(study)
    if not items:
        raise RaterRunError(f"study {study.name!r} shows no answer to rate")
    if (spec.profile == EVIDENCE) != is_evidence(as_template(prompt)):
        raise RaterRunError(f"the {spec.profile} profile needs a prompt version that "
                            f"{'shows' if spec.profile == EVIDENCE else 'does not show'} the {{document}}")
    run = PreparedRating(spec, study, prompt, items, settings)
    if spec.profile == EVIDENCE:
        with_documents(run)
    return run


def with_documents(run: PreparedRating) -> None:
    """Give each item its document, cut once per document to the rater's context beside its longest prompt."""
    spec = run.spec
    try:
        check_max_quotes(spec.max_quotes)
    except ValueError as exc:
        raise RaterRunError(str(exc)) from None
    documents = EvidenceDocuments(spec.rater_model, spec.context_tokens, (item.document_id for item in run.items))
    rest: dict[int, int] = {}
    for item in run.items:
        tokens = sum(documents.counter(m["content"]) for m in run.messages(item))  # the document is still empty
        rest[item.document_id] = max(rest.get(item.document_id, 0), tokens)
    try:
        documents.fit(rest)
    except ValueError as exc:
        raise RaterRunError(f"context tokens: {exc}") from None
    run.items = [replace(item, item=replace(item.item, document=documents.shown(item.document_id),
                                            document_sha=documents.fingerprint(item.document_id)))
                 for item in run.items]
    run.documents = documents


def dry_run(spec: RaterSpec) -> dict[str, Any]:
    """Calls, tokens and cost of a run; answers already rated cost nothing."""
    run = prepare(spec)
    cache = run.cache()
    prompts, cached = [], 0
    for item in run.items:
        if cache.get(run.key(item)) is not None:
            cached += 1
        else:
            prompts.append(run.messages(item))
    estimated = estimate_calls(prompts, spec.rater_model, cached=cached, prices=run.settings.prices)
    truncation = run.documents.record() if run.documents else None
    return {**estimated, "answers": len(run.items), "profile": spec.profile, "truncation": truncation,
            "priced": price_for(spec.rater_model, run.settings.prices) is not None}


def launch(spec: RaterSpec, *, concurrency: int, budget_usd: float | None, user_id: int | None = None) -> Job:
    """Queue a rater job; raises RaterRunError, or DuplicateJob for a twin of an active or finished job."""
    try:
        check_concurrency(concurrency)
    except ValueError as exc:
        raise RaterRunError(str(exc)) from None
    run = prepare(spec, budget_usd=budget_usd)
    try:
        require_endpoint(run.settings)
    except SettingsError as exc:
        raise RaterRunError(str(exc)) from None
    params = {**spec.params(), "concurrency": concurrency, "budget_usd": budget_usd, "answers": len(run.items),
              "fingerprint": run.fingerprint()}
    return submit_job(JOB_KIND, params, user_id=user_id, total=len(run.items))


def execute(run: PreparedRating, *, concurrency: int, budget_usd: float | None, job_id: int | None = None,
            on_progress=None, cancel: threading.Event | None = None,
            ledger: JobUsageLedger | None = None) -> RatingSummary:
    """Rate a prepared run with the DB cache; every call's row is committed as it lands."""
    cache = run.cache(job_id)
    on_result = call_cache.commit_each(cache.record, on_progress)

    return run_ratings(run.settings.client(), [item.item for item in run.items], model=run.spec.rater_model,
                       template=run.template, rubric=RUBRIC, cache=cache, temperature=run.spec.temperature,
                       concurrency=concurrency, budget_usd=budget_usd, prices=run.settings.prices, cancel=cancel,
                       on_result=on_result, evidence=run.spec.evidence, ledger=ledger)


def rater_job(ctx: JobContext) -> dict[str, Any]:
    """Run (or resume) a rater job; ratings already stored cost nothing, so a resume redoes only what is missing."""
    params = ctx.params
    spec = RaterSpec.from_params(params)
    run = prepare(spec)
    if run.fingerprint() != params.get("fingerprint"):
        raise RaterRunError("the study's answers, references or the prompt changed since this job was launched; "
                            "launch a new run")
    job = db.session.get(Job, ctx.job_id)
    # Usage of earlier attempts, calls lost in flight by a crash counted at their reservations.
    before = previous_usage(job)
    budget = params.get("budget_usd")
    remaining = None if budget is None else max(0.0, float(budget) - (before["cost_usd"] or 0.0))
    total = len(run.items)
    ctx.progress(0, total, f"Rating {total} answers")
    cancel = threading.Event()

    def on_progress(done: int, result: RatingResult) -> None:
        ctx.progress(done, total, f"{done} of {total} answers rated", commit=False)
        if ctx.cancelled():
            cancel.set()

    summary = execute(run, concurrency=int(params.get("concurrency", 8)), budget_usd=remaining, job_id=ctx.job_id,
                      on_progress=on_progress, cancel=cancel, ledger=JobUsageLedger(ctx.job_id, before))
    result = {**add_usage(before, summary), "cached": summary.cached, "rated": sum(r.ok for r in summary.results),
              "errors": summary.errors, "answers": total, "skipped": summary.skipped, "stopped": summary.stopped}
    if run.documents is not None:
        result["truncation"] = run.documents.record()
    return finish_calls_job(ctx.job_id, result, stopped=summary.stopped, errors=summary.errors, total=total,
                            noun="ratings")
