"""Export human scores. One row per current score; formats are writers registered in FORMATS.

"Current" means the scores of each annotator's latest round (the open one, or the last
archived one if none is open). Archived earlier rounds are kept in the database, not exported.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import IO

from sqlalchemy import func, select

from ..extensions import db
from ..models import AnnotationRound, Document, Prediction, Question, Score, System, User
from .annotation.scoring import as_utc

# Column order of every export; later formats (csv, …) reuse it.
FIELDS = (
    "annotator", "round", "system", "system_included", "task", "document_id", "question_id", "query",
    "prediction_id", "answer_label", "score", "comment", "first_scored_at", "scored_at", "seconds_spent",
)


def _iso(moment: datetime | None) -> str | None:
    return as_utc(moment).isoformat(timespec="seconds") if moment else None


def current_score_rows() -> Iterator[dict]:
    """Yield one dict per score in each annotator's latest round, in a stable order."""
    latest = (
        select(AnnotationRound.annotator_id, func.max(AnnotationRound.number).label("number"))
        .group_by(AnnotationRound.annotator_id)
        .subquery()
    )
    stmt = (
        select(
            User.username, AnnotationRound.number, System.name, System.in_human_eval, Document.task,
            Document.id, Question.id, Question.instruction, Prediction.id, Score.answer_label, Score.value,
            Score.comment, Score.created_at, Score.updated_at, Score.seconds_spent,
        )
        .select_from(Score)
        .join(AnnotationRound, Score.round_id == AnnotationRound.id)
        .join(latest, (latest.c.annotator_id == AnnotationRound.annotator_id) & (latest.c.number == AnnotationRound.number))
        .join(User, Score.annotator_id == User.id)
        .join(Prediction, Score.prediction_id == Prediction.id)
        .join(System, Prediction.system_id == System.id)
        .join(Question, Prediction.question_id == Question.id)
        .join(Document, Question.document_id == Document.id)
        .order_by(User.username, Document.id, Question.position, Score.answer_label)
    )
    for (username, number, system, included, task, doc_id, question_id, query, prediction_id, label, value,
         comment, created, updated, seconds) in db.session.execute(stmt):
        yield {
            "annotator": username, "round": number, "system": system, "system_included": bool(included),
            "task": task, "document_id": doc_id, "question_id": question_id, "query": query,
            "prediction_id": prediction_id, "answer_label": label, "score": value, "comment": comment,
            "first_scored_at": _iso(created), "scored_at": _iso(updated), "seconds_spent": round(seconds, 3),
        }


def write_jsonl(rows: Iterable[dict], out: IO[str]) -> int:
    """Write JSON lines (UTF-8, keys in FIELDS order); return the row count."""
    count = 0
    for data in rows:
        out.write(json.dumps({key: data[key] for key in FIELDS}, ensure_ascii=False) + "\n")
        count += 1
    return count


FORMATS: dict[str, Callable[[Iterable[dict], IO[str]], int]] = {"jsonl": write_jsonl}


def export_scores(fmt: str, out: IO[str]) -> int:
    """Write the current scores in format `fmt` to `out`; return the row count."""
    try:
        writer = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown export format {fmt!r}; choose from: {', '.join(FORMATS)}") from None
    return writer(current_score_rows(), out)
