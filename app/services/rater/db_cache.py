"""The rater cache on the LLMRating table: one row per content address, errors included until retried."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlalchemy import select

from app.core.rater import RatingResult
from app.extensions import db
from app.models import LLMRating
from app.services.llm import call_cache


def rows_by_key(keys: Iterable[str]) -> dict[str, LLMRating]:
    return call_cache.rows_by_key(LLMRating, keys)


@dataclass
class DBRatingCache:
    """A RatingCache for one run; only the calling thread uses it (the batch layer guarantees that)."""

    rater_model: str
    prompt_id: int | None
    temperature: float
    job_id: int | None = None
    check_quotes: Callable[[RatingResult], dict] | None = None  # the evidence profile: the reply's quotes, checked

    def get(self, key: str) -> RatingResult | None:
        row = db.session.scalars(select(LLMRating).where(LLMRating.cache_key == key,
                                                         LLMRating.score.is_not(None))).first()
        if row is None:
            return None
        return RatingResult(row.answer_id, row.score, row.raw_reply, row.prompt_tokens, row.completion_tokens,
                            row.latency_ms, row.error, row.rater_model, row.cache_key)

    def put(self, key: str, result: RatingResult) -> None:
        self.record(result)

    def record(self, result: RatingResult) -> None:
        """Insert or update the row of the result's key; never replace a rating by an error."""
        call_cache.record(
            LLMRating, result.cache_key, ok=result.ok,
            new_row=lambda: LLMRating(cache_key=result.cache_key, rater_model=self.rater_model,
                                      prompt_id=self.prompt_id, temperature=float(self.temperature)),
            fill=lambda row: _fill(row, result, self.job_id, self.check_quotes), succeeded=lambda row: row.score is not None)


def _fill(row: LLMRating, result: RatingResult, job_id: int | None,
          check_quotes: Callable[[RatingResult], dict] | None) -> None:
    row.answer_id = result.item_id if isinstance(result.item_id, int) else row.answer_id
    row.score = result.score
    row.raw_reply = result.raw_reply
    row.error = result.error
    row.prompt_tokens = result.prompt_tokens
    row.completion_tokens = result.completion_tokens
    row.latency_ms = result.latency_ms
    row.job_id = job_id
    if check_quotes is not None:
        row.evidence = check_quotes(result) if result.ok else None
