"""Studies: blind human-evaluation campaigns over pinned, immutable answer versions."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import db
from app.models.base import created_at_column

STUDY_STATUSES = ("draft", "open", "closed")
# What to do when an answer repeats a reference shown beside it: hide that reference on that
# question (default), show it anyway, or leave the system out of the study.
REFERENCE_POLICIES = ("hide", "show", "exclude")
# How a study gives out its answers: every question to `overlap` annotators (fixed, round-robin), or
# where the ranking is still uncertain, within a budget (adaptive: services/studies/allocation.py).
ALLOCATIONS = ("fixed", "adaptive")


class Study(db.Model):
    __tablename__ = "studies"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(120), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(10), default="draft")
    # True: every account may score. False: only the accounts in study_annotators (none listed: nobody),
    # so a study never opens to everyone by losing its list.
    everyone_may_score: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # How many annotators score each answer; None means every annotator of the study.
    overlap: Mapped[int | None] = mapped_column(Integer)
    # The reference kinds annotators see (Reference.kind values), in display order.
    reference_kinds: Mapped[list[str]] = mapped_column(JSON, default=list)
    reference_policy: Mapped[str] = mapped_column(String(10), default="hide")
    is_demo: Mapped[bool] = mapped_column(Boolean, default=False)
    # False until the answers were compared with the references shown (a migrated study starts False).
    references_checked: Mapped[bool] = mapped_column(Boolean, default=False)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at_column()
    allocation: Mapped[str] = mapped_column(String(10), default="fixed", server_default="fixed")
    # Adaptive only: the most documents read (one per annotator and document), answers given out and
    # annotator-hours of active time; the fewest annotators per answer scored; the tie margin on 1-5.
    budget_documents: Mapped[int | None] = mapped_column(Integer)
    budget_answers: Mapped[int | None] = mapped_column(Integer)
    budget_hours: Mapped[float | None] = mapped_column(Float)
    min_per_answer: Mapped[int | None] = mapped_column(Integer)
    tie_margin: Mapped[float | None] = mapped_column(Float)
    # Identical answers of one question shown once, their one score recorded for each system
    # (services/studies/twins.py). On for new studies; studies made before the option keep it off.
    merge_identical: Mapped[bool] = mapped_column(Boolean, default=True, server_default=false())
    # Adaptive only: the secret seed of every random choice of the policy (stored: a study can be replayed for
    # an audit, and annotators cannot predict it); documents every annotator reads first (None: 1); hours
    # after the first document given during which nobody gets more than one document beyond calibration
    # until every listed annotator has calibrated (None: until they all have); the most documents one
    # annotator is given; flagged annotators the owner lets read on.
    allocation_seed: Mapped[str | None] = mapped_column(String(64))
    calibration_documents: Mapped[int | None] = mapped_column(Integer)
    start_window_hours: Mapped[float | None] = mapped_column(Float)
    max_documents_per_annotator: Mapped[int | None] = mapped_column(Integer)
    included_annotators: Mapped[list[int] | None] = mapped_column(JSON)
    # Fixed only: True once its documents (not questions) are shared out (a study from before that is
    # shared out again at the first start after the upgrade, keeping everything scored).
    shared_by_document: Mapped[bool] = mapped_column(Boolean, default=True, server_default=false())

    @property
    def adaptive(self) -> bool:
        return self.allocation == "adaptive"


class StudyQuestion(db.Model):
    __tablename__ = "study_questions"
    __table_args__ = (UniqueConstraint("study_id", "question_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer, default=0)


class StudySystem(db.Model):
    __tablename__ = "study_systems"
    __table_args__ = (UniqueConstraint("study_id", "system_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id", ondelete="CASCADE"), index=True)
    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"), index=True)


class Answer(db.Model):
    """One exact text a system gave to a question, as a study showed it: never changed once written.

    A prediction's text may be replaced by a later upload; the versions a study pinned stay here,
    and every score points at the version it was given for.
    """

    __tablename__ = "answers"
    __table_args__ = (UniqueConstraint("prediction_id", "version"), UniqueConstraint("prediction_id", "sha256"))

    id: Mapped[int] = mapped_column(primary_key=True)
    prediction_id: Mapped[int] = mapped_column(ForeignKey("predictions.id", ondelete="CASCADE"), index=True)
    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), index=True)
    version: Mapped[int] = mapped_column(Integer, default=1)
    text: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    word_count: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = created_at_column()


class StudyAnswer(db.Model):
    """A study's slot for one system's answer to one question, and the answer version it shows."""

    __tablename__ = "study_answers"
    # (study, answer): how every score finds the slot it was given in (exports, results). Without it SQLite,
    # which plans without statistics, may look the slot up through the study's index alone and scan every
    # slot of the study per score: a 100-row page of a 17,850-score study took 3.8 s (issue 38).
    __table_args__ = (UniqueConstraint("study_id", "question_id", "system_id"),
                      Index("ix_study_answers_study_id_answer_id", "study_id", "answer_id"))

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), index=True)
    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"), index=True)
    answer_id: Mapped[int] = mapped_column(ForeignKey("answers.id", ondelete="CASCADE"), index=True)
    # Not shown (its system left the study): the slot stays, so no other answer's label ever moves.
    excluded: Mapped[bool] = mapped_column(Boolean, default=False)
    # Shown on the annotator's page through this other slot of the question, whose text shows the same
    # (services/studies/twins.py); None for a slot shown by itself.
    twin_of_id: Mapped[int | None] = mapped_column(ForeignKey("study_answers.id", ondelete="SET NULL"), index=True)

    answer: Mapped[Answer] = relationship()


class StudyHiddenReference(db.Model):
    """A reference not shown on one question of a study, because an answer repeats it."""

    __tablename__ = "study_hidden_references"
    __table_args__ = (UniqueConstraint("study_id", "question_id", "kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(40))
    reason: Mapped[str] = mapped_column(Text, default="")


class TextRepeat(db.Model):
    """Whether one exact text repeats another (app.core.metrics.similarity.repeats), by their sha256.

    Content-addressed: an answer version never changes and a changed reference has another hash, so
    a row stays true for as long as its rule (REPEATS_RULE) does; the study page and every pin
    read these instead of comparing each answer with each reference again.
    """

    __tablename__ = "text_repeats"

    rule: Mapped[str] = mapped_column(String(40), primary_key=True)
    text_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    other_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    match: Mapped[str] = mapped_column(String(16), default="")  # "", identical or near-identical


class StudyAnnotator(db.Model):
    __tablename__ = "study_annotators"
    __table_args__ = (UniqueConstraint("study_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)


class StudyAssignment(db.Model):
    """One question given to one annotator of a study with an overlap below "everyone"."""

    __tablename__ = "study_assignments"
    __table_args__ = (UniqueConstraint("study_id", "user_id", "question_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), index=True)


class StudyAllocation(db.Model):
    """One answer given to one annotator by an adaptive study, at one step of its sampling (for replay)."""

    __tablename__ = "study_allocations"
    __table_args__ = (UniqueConstraint("study_id", "user_id", "study_answer_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    study_answer_id: Mapped[int] = mapped_column(ForeignKey("study_answers.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), index=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    # The study's allocation step (1, 2, …): every answer of one step was given in one request.
    step: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = created_at_column()
