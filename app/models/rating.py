"""The pointwise LLM rater: versioned prompts and its ratings (also its cache). Never human scores."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db
from app.models.base import created_at_column


class RaterPrompt(db.Model):
    __tablename__ = "rater_prompts"
    __table_args__ = (UniqueConstraint("name", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    version: Mapped[int] = mapped_column(Integer, default=1)
    system_text: Mapped[str] = mapped_column(Text)
    user_template: Mapped[str] = mapped_column(Text)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at_column()


class LLMRating(db.Model):
    """One rater call on one answer version; its content address is what was sent (rater.rating_key)."""

    __tablename__ = "llm_ratings"

    id: Mapped[int] = mapped_column(primary_key=True)
    cache_key: Mapped[str] = mapped_column(String(64), unique=True)
    answer_id: Mapped[int | None] = mapped_column(ForeignKey("answers.id", ondelete="SET NULL"), index=True)
    rater_model: Mapped[str] = mapped_column(String(120))
    prompt_id: Mapped[int | None] = mapped_column(ForeignKey("rater_prompts.id", ondelete="SET NULL"))
    temperature: Mapped[float] = mapped_column(Float, default=0.0)
    score: Mapped[int | None] = mapped_column(Integer)  # 1-5, NULL on error
    raw_reply: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    # The `evidence` profile: {"document_id", "quotes": [{answer, stance, quote, status, start, end, reason,
    # too_short}]},
    # each quote checked against the stored document (app.core.evidence); NULL for reference-only ratings.
    evidence: Mapped[dict | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = created_at_column()
