"""One row per human score with full provenance: the `jsonl` and `csv` exports."""
from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import func, select

from app.core.version import __version__
from app.extensions import db
from app.models import (
    AnnotationRound,
    Answer,
    Document,
    Prediction,
    PredictionFile,
    Question,
    Score,
    Study,
    StudyAllocation,
    StudyAnswer,
    System,
    User,
)
from app.services.studies.membership import in_latest_round, shown_answers, study_scores
from app.services.studies.twins import scored_once_for

# The first ten are the minimal export's columns; the rest make a row traceable and importable.
SCORE_FIELDS = (
    "annotator", "system", "document_id", "question_id", "query", "answer_label", "score", "comment",
    "scored_at", "seconds_spent", "round", "round_status", "first_scored_at", "task", "document_sha256",
    "question_position", "gt", "prediction_file", "prediction_file_sha256", "answer_sha256", "answer_version",
    "stale", "annotator_active", "study", "app_version", "allocation", "allocation_step", "shown_once_for",
)
ROUND_CHOICES = ("all", "current")


def iso_utc(moment: datetime | None) -> str:
    """Format a timestamp as ISO 8601 in UTC; SQLite returns naive datetimes, which are UTC here."""
    if moment is None:
        return ""
    if moment.tzinfo is None:  # as as_utc reads it, without building an aware copy (twice per exported score)
        return moment.isoformat(timespec="microseconds") + "+00:00"
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def whole_seconds(seconds: float | None) -> int:
    """Active time as exported: whole seconds (the page reports whole seconds; an imported file may not)."""
    return round(seconds or 0.0)


def parse_iso_utc(text: str) -> datetime:
    """Read a timestamp written by iso_utc (or any ISO 8601 string); naive means UTC."""
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


# Rows read from the database at a time while an export streams: its memory does not grow with the study.
STREAM_CHUNK = 1000
TEXTS_KEPT = 4 * STREAM_CHUNK  # questions whose text and reference an export keeps while it streams


def score_rows(study_id: int, rounds: str = "all", annotator: str | None = None,
               score_ids: list[int] | None = None) -> list[dict[str, Any]]:
    """Return the study's scores (or only each annotator's latest round) as export rows, in a stable order
    (iter_score_rows as a list)."""
    return list(iter_score_rows(study_id, rounds, annotator, score_ids))


def _score_statement(study_id: int, rounds: str, annotator: str | None, score_ids: list[int] | None):
    if rounds not in ROUND_CHOICES:
        raise ValueError(f"rounds must be one of {ROUND_CHOICES}, not {rounds!r}")
    stmt = (
        study_scores(
            study_id, User.username, System.name, Document.id, Question.id, Score.answer_label,
            Score.value, Score.comment, Score.updated_at, Score.seconds_spent, AnnotationRound.number,
            AnnotationRound.status, Score.created_at, Document.task, Document.sha256, Question.position,
            PredictionFile.filename, PredictionFile.sha256, Score.answer_sha256, Answer.version,
            Score.answer_id, User.active, StudyAllocation.step, Score.id, Score.copied_from_id, include_stale=True,
        )
        .join(User, User.id == AnnotationRound.annotator_id)
        .outerjoin(StudyAnswer, (StudyAnswer.study_id == study_id) & (StudyAnswer.answer_id == Score.answer_id))
        .outerjoin(StudyAllocation, (StudyAllocation.study_id == study_id)
                   & (StudyAllocation.user_id == AnnotationRound.annotator_id)
                   & (StudyAllocation.study_answer_id == StudyAnswer.id))
        .join(Prediction, Prediction.id == Answer.prediction_id)
        .outerjoin(PredictionFile, PredictionFile.id == Prediction.file_id)
    )
    if rounds == "current":
        stmt = in_latest_round(stmt, study_id)
    if annotator is not None:
        stmt = stmt.where(User.username == annotator)
    if score_ids is not None:
        stmt = stmt.where(Score.id.in_(score_ids))
    return stmt


def count_score_rows(study_id: int, rounds: str = "all") -> int:
    """How many rows iter_score_rows gives, counted by the database."""
    stmt = _score_statement(study_id, rounds, None, None)
    return db.session.scalar(select(func.count()).select_from(stmt.subquery())) or 0


def iter_score_rows(study_id: int, rounds: str = "all", annotator: str | None = None,
                    score_ids: list[int] | None = None, *, offset: int = 0,
                    limit: int | None = None) -> Iterator[dict[str, Any]]:
    """Yield the study's scores (or only each annotator's latest round) as export rows, in a stable order,
    reading STREAM_CHUNK rows from the database at a time; `offset` and `limit` page them in the query.

    Every row names the exact answer version scored (`answer_sha256`, `answer_version`); `stale`
    is true when the study no longer shows that version (a score results leave out);
    `annotator_active` lets a re-import create the account as it was. `allocation` is the study's
    policy (fixed or adaptive) and `allocation_step` the adaptive step at which the answer was given
    to the annotator (empty in a fixed study), so the sampling can be replayed. `shown_once_for` names the
    systems whose identical answers the annotator's page showed once and scored once (this row's system among
    them; services/studies/twins.py), and is empty for an answer shown by itself.
    """
    values = iter_score_values(study_id, rounds, annotator, score_ids, offset=offset, limit=limit)
    return (dict(zip(SCORE_FIELDS, row, strict=True)) for row in values)


def iter_score_values(study_id: int, rounds: str = "all", annotator: str | None = None,
                      score_ids: list[int] | None = None, *, offset: int = 0,
                      limit: int | None = None) -> Iterator[tuple[Any, ...]]:
    """iter_score_rows' rows as tuples in SCORE_FIELDS order (the CSV export writes them without a dict each)."""
    stmt = _score_statement(study_id, rounds, annotator, score_ids)  # a bad argument fails here, not mid-stream
    return _rows(study_id, stmt, offset, limit)


def _rows(study_id: int, stmt, offset: int, limit: int | None) -> Iterator[tuple[Any, ...]]:
    stmt = stmt.order_by(
        User.username, AnnotationRound.number, Document.id, Question.position, System.name, Answer.version)
    if offset:
        stmt = stmt.offset(offset)
    if limit is not None:
        stmt = stmt.limit(limit)
    study_name, allocation = db.session.execute(select(Study.name, Study.allocation).where(Study.id == study_id)).one()
    shown = set(db.session.scalars(shown_answers(study_id, StudyAnswer.answer_id)))
    shown_once = scored_once_for(study_id)
    streamed = db.session.execute(stmt.execution_options(yield_per=STREAM_CHUNK))
    # A question's text and reference are read once per chunk of rows, not with each of its scores: they were most
    # of what the database sent (17 of 18 MB for 20,000 scores), and on PostgreSQL most of the export's time.
    texts: dict[int, tuple[str, str]] = {}
    for chunk in streamed.partitions():
        _read_texts(texts, {row[3] for row in chunk})
        for (username, system, document_id, question_id, label, value, comment, updated, seconds, number,
             status, created, task, document_sha, position, filename, file_sha, answer_sha, version,
             answer_id, active, step, score_id, source_id) in chunk:
            query, gt = texts[question_id]
            yield (  # in SCORE_FIELDS order
                username, system, document_id, question_id, query, label or "", value, comment or "",
                iso_utc(updated or created), whole_seconds(seconds), number, status, iso_utc(created), task,
                document_sha, position, gt, filename or "", file_sha or "", answer_sha, version,
                answer_id not in shown, bool(active), study_name, __version__, allocation,
                step if step is not None else "", shown_once.get(source_id or score_id, ""),
            )


def _read_texts(texts: dict[int, tuple[str, str]], question_ids: set[int]) -> None:
    """Add the (instruction, reference) of the chunk's questions not read yet; memory stays bounded on a study of
    many questions (past TEXTS_KEPT, the texts are read again as their questions come back)."""
    missing = question_ids - texts.keys()
    if missing and len(texts) + len(missing) > TEXTS_KEPT:
        texts.clear()
        missing = question_ids
    if missing:
        texts.update((qid, (query, gt)) for qid, query, gt in db.session.execute(
            select(Question.id, Question.instruction, Question.reference).where(Question.id.in_(missing))))
