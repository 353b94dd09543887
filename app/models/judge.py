"""Versioned judge prompts and pairwise LLM judgments (also the judge cache)."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db
from app.models.base import created_at_column


class JudgePrompt(db.Model):
    __tablename__ = "judge_prompts"
    __table_args__ = (UniqueConstraint("name", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    version: Mapped[int] = mapped_column(Integer, default=1)
    system_text: Mapped[str] = mapped_column(Text)
    user_template: Mapped[str] = mapped_column(Text)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at_column()


class LLMJudgment(db.Model):
    """One judge call: a question, the system and baseline answers, in one order."""

    __tablename__ = "llm_judgments"

    id: Mapped[int] = mapped_column(primary_key=True)
    # Content address: judge model, prompt version, question, reference, both answers, temperature.
    cache_key: Mapped[str] = mapped_column(String(64), unique=True)
    question_id: Mapped[int | None] = mapped_column(ForeignKey("questions.id", ondelete="SET NULL"), index=True)
    system_id: Mapped[int | None] = mapped_column(ForeignKey("systems.id", ondelete="SET NULL"), index=True)
    baseline_id: Mapped[int | None] = mapped_column(ForeignKey("systems.id", ondelete="SET NULL"), index=True)
    order: Mapped[str] = mapped_column(String(2))  # "AB": system is assistant A; "BA": it is B
    judge_model: Mapped[str] = mapped_column(String(120))
    prompt_id: Mapped[int | None] = mapped_column(ForeignKey("judge_prompts.id", ondelete="SET NULL"))
    temperature: Mapped[float] = mapped_column(Float, default=0.0)
    verdict: Mapped[str | None] = mapped_column(String(1))  # A, B, C (tie) or NULL on error
    raw_reply: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    # The `evidence` profile: the quotes of both answers, checked (see LLMRating.evidence); else NULL.
    evidence: Mapped[dict | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = created_at_column()
