"""The judge cache on the LLMJudgment table: one row per content address, errors included.

A row is written for every judge call. Successful rows are cache entries; error rows keep
the failure (raw reply, message, tokens) visible until a later run replaces them.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlalchemy import select

from app.core.judge import JudgmentResult
from app.extensions import db
from app.models import LLMJudgment
from app.services.judge.pairs import JudgePair
from app.services.llm import call_cache


def result_from_row(row: LLMJudgment) -> JudgmentResult:
    """Return the stored judgment as the runner's result type."""
    return JudgmentResult(
        pair_id=row.question_id or 0, order=row.order, verdict=row.verdict,  # type: ignore[arg-type]
        raw_reply=row.raw_reply,
        prompt_tokens=row.prompt_tokens, completion_tokens=row.completion_tokens, latency_ms=row.latency_ms,
        error=row.error, model=row.judge_model, cache_key=row.cache_key,
    )


def rows_by_key(keys: Iterable[str]) -> dict[str, LLMJudgment]:
    """Return the stored judgments for these cache keys."""
    return call_cache.rows_by_key(LLMJudgment, keys)


@dataclass
class DBJudgeCache:
    """A JudgeCache for one run; it knows the run's pairs so rows carry their question and systems.

    Only the calling thread may use it (the runner guarantees that): it shares the request's
    or job's database session.
    """

    pairs: dict[object, JudgePair]
    judge_model: str
    prompt_id: int | None
    temperature: float
    system_id: int | None = None
    baseline_id: int | None = None
    job_id: int | None = None
    check_quotes: Callable[[JudgmentResult], dict] | None = None  # the evidence profile: the reply's quotes, checked

    @classmethod
    def for_pairs(cls, pairs: list[JudgePair], **kwargs) -> DBJudgeCache:
        return cls(pairs={pair.item.pair_id: pair for pair in pairs}, **kwargs)

    def get(self, key: str) -> JudgmentResult | None:
        """Return a stored judgment with a verdict; errors are not cache hits, so they are retried."""
        row = db.session.scalars(
            select(LLMJudgment).where(LLMJudgment.cache_key == key, LLMJudgment.verdict.is_not(None))
        ).first()
        return None if row is None else result_from_row(row)

    def put(self, key: str, result: JudgmentResult) -> None:
        """Store a successful judgment (the caller commits)."""
        self.record(result)

    def record(self, result: JudgmentResult) -> None:
        """Insert or update the row for the result's cache key; never replace a verdict by an error."""
        call_cache.record(LLMJudgment, result.cache_key, ok=result.ok, new_row=lambda: self._new_row(result),
                          fill=lambda row: _fill(row, result, self.job_id, self.check_quotes), succeeded=lambda row: row.verdict is not None)

    def _new_row(self, result: JudgmentResult) -> LLMJudgment:
        pair = self.pairs.get(result.pair_id)
        return LLMJudgment(
            cache_key=result.cache_key,
            question_id=pair.question_id if pair else None,
            system_id=self.system_id,
            baseline_id=self.baseline_id,
            order=result.order,
            judge_model=self.judge_model,
            prompt_id=self.prompt_id,
            temperature=float(self.temperature),
        )


def _fill(row: LLMJudgment, result: JudgmentResult, job_id: int | None,
          check_quotes: Callable[[JudgmentResult], dict] | None = None) -> None:
    row.verdict = result.verdict
    row.raw_reply = result.raw_reply
    row.error = result.error
    row.prompt_tokens = result.prompt_tokens
    row.completion_tokens = result.completion_tokens
    row.latency_ms = result.latency_ms
    row.job_id = job_id
    if check_quotes is not None:
        row.evidence = check_quotes(result) if result.ok else None
