"""Human scoring: rounds, per-question views (blind order), scores and their history."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, CheckConstraint, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import db
from app.models.base import created_at_column, utcnow


class AnnotationRound(db.Model):
    """One pass of an annotator over a study; "begin again" archives it and opens the next."""

    __tablename__ = "annotation_rounds"
    __table_args__ = (UniqueConstraint("study_id", "annotator_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id", ondelete="CASCADE"), index=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer, default=1)
    status: Mapped[str] = mapped_column(String(20), default="open")  # open | archived
    started_at: Mapped[datetime] = created_at_column()
    archived_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    archived_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))


class QuestionView(db.Model):
    """The shuffled answer order an annotator saw for a question, and when they first saw it."""

    __tablename__ = "question_views"
    __table_args__ = (UniqueConstraint("round_id", "question_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("annotation_rounds.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), index=True)
    # StudyAnswer ids in display order (index 0 is "Answer A"), drawn from a secure random source.
    order: Mapped[list[int]] = mapped_column(JSON)
    first_viewed_at: Mapped[datetime] = created_at_column()


class Score(db.Model):
    __tablename__ = "scores"
    __table_args__ = (
        UniqueConstraint("round_id", "answer_id"),
        CheckConstraint("value BETWEEN 1 AND 5", name="value_1_to_5"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("annotation_rounds.id", ondelete="CASCADE"), index=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    # The exact answer version scored, and its text's sha256 as the annotator saw it.
    answer_id: Mapped[int] = mapped_column(ForeignKey("answers.id", ondelete="CASCADE"), index=True)
    answer_sha256: Mapped[str] = mapped_column(String(64), default="")
    # None once the annotator cleared it: the row stays for its revisions (the audit trail), and a
    # cleared score counts nowhere (see COUNTED below).
    value: Mapped[int | None] = mapped_column(Integer)
    comment: Mapped[str] = mapped_column(Text, default="")
    answer_label: Mapped[str] = mapped_column(String(4), default="")
    seconds_spent: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)
    # Recorded for this system from the score given (this one's source) on an identical answer of another system
    # that the annotator's page showed once for both (services/studies/twins.py); None for a score given here.
    copied_from_id: Mapped[int | None] = mapped_column(ForeignKey("scores.id", ondelete="SET NULL"), index=True)

    revisions: Mapped[list[ScoreRevision]] = relationship(
        back_populates="score", cascade="all, delete-orphan", order_by="ScoreRevision.id"
    )


class ScoreRevision(db.Model):
    __tablename__ = "score_revisions"

    id: Mapped[int] = mapped_column(primary_key=True)
    score_id: Mapped[int] = mapped_column(ForeignKey("scores.id", ondelete="CASCADE"), index=True)
    old_value: Mapped[int | None] = mapped_column(Integer)
    new_value: Mapped[int | None] = mapped_column(Integer)  # None: the score was cleared
    old_comment: Mapped[str | None] = mapped_column(Text)
    new_comment: Mapped[str] = mapped_column(Text, default="")
    changed_at: Mapped[datetime] = created_at_column()

    score: Mapped[Score] = relationship(back_populates="revisions")


# The one rule of which scores count (progress, results, analyses, exports): not a cleared one.
COUNTED = Score.value.is_not(None)
