"""What LongBench's rows say about a question and an answer beyond their text (app.services.longbench)."""
from __future__ import annotations

from sqlalchemy import Boolean, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db

# LongBench's questions, v1, LongBench-E and v2: one document per data row's context (when LongBench's data files
# were imported), else one per dataset without text.
LONGBENCH = "longbench"


class LongbenchItem(db.Model):
    """A LongBench question: its question set, dataset and row, the answers and classes eval.py scores with, and
    LongBench v2's categories."""

    __tablename__ = "longbench_items"

    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), primary_key=True)
    variant: Mapped[str] = mapped_column(String(4), index=True)  # "v1", "e" (LongBench-E) or "v2"
    dataset: Mapped[str] = mapped_column(String(40), index=True)  # one of the 21; "v2" for LongBench v2
    position: Mapped[int] = mapped_column(Integer, default=0)  # 1-based row of the data file (v1, E)
    item_id: Mapped[str] = mapped_column(String(64), default="")  # the data row's `_id` (v2's key)
    answers: Mapped[str] = mapped_column(Text)  # JSON: the list of answers (v1, E); v2: the answer letter
    all_classes: Mapped[str | None] = mapped_column(Text)  # JSON list (trec, lsht), else None
    length: Mapped[float | None] = mapped_column(Float)  # words (characters for Chinese): LongBench-E's bucket
    difficulty: Mapped[str] = mapped_column(String(8), default="")  # v2: easy or hard
    length_class: Mapped[str] = mapped_column(String(8), default="")  # v2: short, medium or long
    domain: Mapped[str] = mapped_column(String(80), default="")  # v2


class LongbenchAnswer(db.Model):
    """A LongBench v2 answer: the letter pred.py extracted from the response (None: none) and its `judge`."""

    __tablename__ = "longbench_answers"

    prediction_id: Mapped[int] = mapped_column(ForeignKey("predictions.id", ondelete="CASCADE"), primary_key=True)
    choice: Mapped[str | None] = mapped_column(String(1))
    judge: Mapped[bool] = mapped_column(Boolean, default=False)
