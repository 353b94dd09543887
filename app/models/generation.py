"""Generation runs (prompt versions, the call cache, manifests) and authored question/answer pairs."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import db
from app.models.base import created_at_column

# Documents that hold the questions made from authored pairs (one per authored-on document).
AUTHORED = "authored"
# Documents brought in to author on (a task file whose text is not stored yet).
IMPORTED = "imported"


class GenerationPrompt(db.Model):
    """One version of a generation prompt profile; an edit adds a version, never rewrites one."""

    __tablename__ = "generation_prompts"
    __table_args__ = (UniqueConstraint("name", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    version: Mapped[int] = mapped_column(Integer, default=1)
    content: Mapped[dict] = mapped_column(JSON)  # PromptProfile.content()
    fingerprint: Mapped[str] = mapped_column(String(64))
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at_column()


class GenerationRun(db.Model):
    """A model run over a question set: what it was asked (spec), what it was (manifest), where it went."""

    __tablename__ = "generation_runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"), index=True)
    system_id: Mapped[int | None] = mapped_column(ForeignKey("systems.id", ondelete="SET NULL"), index=True)
    system_name: Mapped[str] = mapped_column(String(120))
    prompt_id: Mapped[int | None] = mapped_column(ForeignKey("generation_prompts.id", ondelete="SET NULL"))
    spec: Mapped[dict] = mapped_column(JSON, default=dict)
    manifest: Mapped[dict] = mapped_column(JSON, default=dict)
    questions: Mapped[int] = mapped_column(Integer, default=0)
    answered: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at_column()

    prompt: Mapped[GenerationPrompt | None] = relationship()


class GenerationCall(db.Model):
    """A successful chat call, stored by the content address of its request: the generation cache."""

    __tablename__ = "generation_calls"

    id: Mapped[int] = mapped_column(primary_key=True)
    cache_key: Mapped[str] = mapped_column(String(64), unique=True)
    model: Mapped[str] = mapped_column(String(200))
    reported_model: Mapped[str] = mapped_column(String(200), default="")
    endpoint: Mapped[str] = mapped_column(String(300), default="")
    reply: Mapped[str] = mapped_column(Text, default="")
    finish_reason: Mapped[str | None] = mapped_column(String(40))
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("generation_runs.id", ondelete="SET NULL"), index=True)
    created_at: Mapped[datetime] = created_at_column()


class AuthoredPair(db.Model):
    """A researcher's instruction/answer pair on a stored document, with its evidence spans.

    `version` grows with every change: a save names the version it edited, so two researchers
    never overwrite each other silently. A deleted pair stays as a tombstone saying who deleted it.
    """

    __tablename__ = "authored_pairs"

    id: Mapped[int] = mapped_column(primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int | None] = mapped_column(ForeignKey("questions.id", ondelete="SET NULL"), index=True)
    instruction: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    evidence: Mapped[list] = mapped_column(JSON, default=list)  # [{"start", "end", "quote"}] in the stored text
    version: Mapped[int] = mapped_column(Integer, default=1)
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    author_name: Mapped[str] = mapped_column(String(80), default="")
    created_at: Mapped[datetime] = created_at_column()
    updated_by_name: Mapped[str] = mapped_column(String(80), default="")
    updated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    deleted_by_name: Mapped[str | None] = mapped_column(String(80))
    deleted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class GenerationAnswer(db.Model):
    """Which answer version a run produced for a question (the run's own record, kept when texts move on)."""

    __tablename__ = "generation_answers"
    __table_args__ = (UniqueConstraint("run_id", "question_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("generation_runs.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), index=True)
    prediction_id: Mapped[int | None] = mapped_column(ForeignKey("predictions.id", ondelete="SET NULL"))
    answer_id: Mapped[int | None] = mapped_column(ForeignKey("answers.id", ondelete="SET NULL"))
    prompt: Mapped[str] = mapped_column(Text, default="")  # the `prompt` value of L-Eval's row
    created_at: Mapped[datetime] = created_at_column()
