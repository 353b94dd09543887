"""Saving scores: validated 1–5 integers or a clear, idempotent, with every change kept as a revision.

This module holds the whole save path of the question page: the parsed body (payload.py), the annotator's round and
view, the label's answer (which must still be the exact text the page showed, by its sha256), the
write and the progress the page shows next.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Float, and_, bindparam, case, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from app.core.rubric import SCALE
from app.extensions import db
from app.models import (
    COUNTED,
    AnnotationRound,
    Answer,
    QuestionView,
    Score,
    ScoreRevision,
    StudyAnswer,
)
from app.models.base import as_utc, utcnow
from app.services.annotation.payload import ScoreError, label_index, parse_score_payload
from app.services.data_versions import note_written
from app.services.sqlite_writer import one_writer
from app.services.studies.assignment import (
    answer_in_share,
    in_share,
    may_score,
    may_score_question,
)
from app.services.studies.membership import ON_PAGE
from app.services.studies.twins import record_for_twins

STARTED_OVER = "Your scoring round has changed (you were started over). Reload the page."
NOT_YOURS = "This question is not yours to score in this study (any more). Reload the page."
ANSWER_CHANGED = "Answer {label} is not the text this page showed any more. Reload the page."


@dataclass(frozen=True)
class SaveContext:
    """What a save needs from the database, read in one query: the open round and the view."""

    round_id: int
    round_number: int
    annotator_id: int
    study_id: int
    order: list[int]


# Built once: the save endpoint is the hottest path, and statement construction is not free. The
# annotator's open round and view, only where the page's own rule lets them score the question
# (assignment.may_score: an open study they are on, the question in their share).
_CONTEXT = (
    select(AnnotationRound.id, AnnotationRound.number, QuestionView.order)
    .join(QuestionView, QuestionView.round_id == AnnotationRound.id)
    .where(
        AnnotationRound.study_id == bindparam("study_id"), AnnotationRound.annotator_id == bindparam("annotator_id"),
        AnnotationRound.status == "open", QuestionView.question_id == bindparam("question_id"),
        may_score(bindparam("study_id"), bindparam("annotator_id"), bindparam("question_id")),
    )
)
_OPEN_ROUND_NUMBER = select(AnnotationRound.number).where(
    AnnotationRound.study_id == bindparam("study_id"), AnnotationRound.annotator_id == bindparam("annotator_id"),
    AnnotationRound.status == "open",
)
# The answer in one slot of an order, with the round's score on it (none without a round): the
# save reads both in one round trip.
_SHOWN_ANSWER = (
    select(Answer.id, Answer.sha256, Score.id, Score.value, Score.comment)
    .join(StudyAnswer, StudyAnswer.answer_id == Answer.id)
    .outerjoin(Score, and_(Score.answer_id == Answer.id, Score.round_id == bindparam("round_id")))
    .where(StudyAnswer.id == bindparam("slot_id"), StudyAnswer.study_id == bindparam("study_id"),
           ON_PAGE)
)
_CURRENT = select(Score.id, Score.value, Score.comment).where(
    Score.round_id == bindparam("round_id"), Score.answer_id == bindparam("answer_id")
)
_INSERT_SCORE = insert(Score).returning(Score.id)
_INSERT_REVISION = insert(ScoreRevision)
# A save without a time (new_seconds None) keeps the time stored.
_UPDATE_SCORE = update(Score).where(Score.id == bindparam("score_id")).values(
    value=bindparam("new_value"), comment=bindparam("new_comment"), answer_label=bindparam("new_label"),
    updated_at=bindparam("now"), seconds_spent=func.coalesce(bindparam("new_seconds", type_=Float), Score.seconds_spent),
)


def _execute(statement, parameters: dict):
    """Run a built statement on the session's connection: Core execution, without the ORM's per-statement cost."""
    return db.session.connection().execute(statement, parameters)


def load_save_context(annotator_id: int, study_id: int, question_id: int) -> SaveContext | None:
    """The annotator's open round and view of the question, where they may score it (see _CONTEXT), or None."""
    found = _execute(_CONTEXT, {"annotator_id": annotator_id, "study_id": study_id, "question_id": question_id}).first()
    if found is None:
        return None
    return SaveContext(found[0], found[1], annotator_id, study_id, list(found[2]))


def _shown_row(order: list[int], study_id: int, label: str, round_id: int | None):
    index = label_index(label)
    if index is None or index >= len(order):
        return None
    return _execute(_SHOWN_ANSWER, {"slot_id": order[index], "study_id": study_id, "round_id": round_id}).first()


def resolve_in_order(order: list[int], study_id: int, label: str) -> tuple[int, str] | None:
    """(answer id, its sha256) shown behind a label in this order now, or None."""
    found = _shown_row(order, study_id, label, None)
    return (found[0], found[1]) if found else None


@dataclass(frozen=True)
class SaveResult:
    changed: bool
    value: int | None
    comment: str
    seconds_spent: float | None
    saved_at: datetime


_UNREAD = object()  # save_score reads the current score itself


def save_score(
    context: SaveContext, answer_id: int, answer_sha256: str, label: str, value: int | None, comment: str,
    *, seconds: int | None = None, now: datetime | None = None, commit: bool = True, current=_UNREAD,
    _retry: bool = True,
) -> SaveResult:
    """Store a score with a revision; the same value and comment again change nothing (safe to retry).

    value None clears the score: its row stays with no value (it counts nowhere, see models.COUNTED)
    and the clear is a revision like any change; clearing what was never scored writes nothing.

    `seconds` is the active time the page measured on the question up to this save (see
    static/js/activetime.js); without it a new score gets 0 and a changed one keeps its time.
    `current` is the round's (score id, value, comment) on the answer when the caller has read it,
    None for no score. commit=False leaves the commit to the caller (who reads more in the same
    transaction first). A caller saving for concurrent requests holds `one_writer()` around the
    whole transaction, as save_from_request does.
    """
    now = now or utcnow()
    if current is _UNREAD:
        current = _execute(_CURRENT, {"round_id": context.round_id, "answer_id": answer_id}).first()
    if current is not None and current[1] == value and current[2] == comment:
        return SaveResult(False, value, comment, seconds, now)
    if current is None and value is None:
        return SaveResult(False, None, comment, seconds, now)  # nothing to clear
    try:
        if current is None:
            score_id = _execute(_INSERT_SCORE, {
                "round_id": context.round_id, "annotator_id": context.annotator_id, "answer_id": answer_id,
                "answer_sha256": answer_sha256, "value": value, "comment": comment, "answer_label": label,
                "seconds_spent": float(seconds or 0), "created_at": now, "updated_at": now,
            }).scalar_one()
            old_value, old_comment = None, None
        else:
            score_id, old_value, old_comment = current
            _execute(_UPDATE_SCORE, {"score_id": score_id, "new_value": value, "new_comment": comment,
                                     "new_label": label, "now": now,
                                     "new_seconds": None if seconds is None else float(seconds)})
        _execute(_INSERT_REVISION, {
            "score_id": score_id, "old_value": old_value, "new_value": value, "old_comment": old_comment,
            "new_comment": comment, "changed_at": now,
        })
        note_written(Score.__tablename__, study_id=context.study_id)  # Core writes: this study's analyses change
        if commit:
            db.session.commit()
    except IntegrityError:
        # A retried request raced its first attempt; read what that one stored and compare again.
        db.session.rollback()
        if not _retry:
            raise
        return save_score(context, answer_id, answer_sha256, label, value, comment, seconds=seconds, now=now,
                          commit=commit, _retry=False)
    return SaveResult(True, value, comment, seconds, now)


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    question_scored: int
    question_total: int


def _progress_statement():
    """Overall and per-question counts in one pass over the annotator's answers (the save endpoint's answer).

    The annotator's answers: those the study shows, on the questions assigned to them when the
    study has an overlap limit; each joined with this round's score on it, if any.
    """
    assigned = and_(in_share(bindparam("study_id"), bindparam("user_id"), StudyAnswer.question_id),
                    answer_in_share(bindparam("study_id"), bindparam("user_id"), StudyAnswer.id))
    on_question = StudyAnswer.question_id == bindparam("question_id")
    return (
        select(
            func.count(), func.count(Score.value),  # a cleared score (no value) is not counted
            func.coalesce(func.sum(case((on_question, 1), else_=0)), 0),
            func.coalesce(func.sum(case((and_(on_question, COUNTED), 1), else_=0)), 0),
        )
        .select_from(StudyAnswer)
        .outerjoin(Score, and_(Score.answer_id == StudyAnswer.answer_id, Score.round_id == bindparam("round_id")))
        .where(StudyAnswer.study_id == bindparam("study_id"), ON_PAGE, assigned)
    )


_PROGRESS = _progress_statement()


def progress_after_save(context: SaveContext, question_id: int) -> Progress:
    total, done, question_total, question_scored = _execute(_PROGRESS, {
        "round_id": context.round_id, "question_id": question_id, "study_id": context.study_id,
        "user_id": context.annotator_id,
    }).one()
    return Progress(done=done, total=total, question_scored=question_scored, question_total=question_total)


def save_from_request(annotator_id: int, data: object) -> dict:
    """Validate, resolve and store one save of the question page; return the JSON answer or raise ScoreError.

    400 for a malformed save; 404 when the account may not score this question of this study (not
    open, not on it, not in its share: the page's own rule); 409 with `reload` when the page no
    longer matches the annotator's round, the answers shown or their exact texts (the page must
    reload, not retry).
    """
    payload = parse_score_payload(data)
    context = load_save_context(annotator_id, payload.study_id, payload.question_id)
    if context is None:
        if not may_score_question(payload.study_id, annotator_id, payload.question_id):
            raise ScoreError(NOT_YOURS, status=404, reload=True)
        current = _execute(_OPEN_ROUND_NUMBER, {"annotator_id": annotator_id, "study_id": payload.study_id}).scalar()
        if current is None or payload.round_number not in (None, current):
            raise ScoreError(STARTED_OVER, status=409, reload=True)
        raise ScoreError("This question is not open in your current round. Reload the page.", status=409, reload=True)
    if payload.round_number is not None and payload.round_number != context.round_number:
        raise ScoreError(STARTED_OVER, status=409, reload=True)
    shown = _shown_row(context.order, context.study_id, payload.label, context.round_id)
    if shown is None:
        raise ScoreError(f"Answer {payload.label} is not part of this question any more. Reload the page.",
                         status=409, reload=True)
    answer_id, sha, score_id, value, comment = shown
    if sha != payload.answer_sha256:
        # The study moved to another version since the page loaded: never file a score under text it was not given for.
        raise ScoreError(ANSWER_CHANGED.format(label=payload.label), status=409, reload=True)
    # Progress is read in the save's own transaction, before its commit: one connection and
    # transaction per save (each is a round trip on a database server).
    with one_writer():
        result = save_score(context, answer_id, sha, payload.label, payload.value, payload.comment,
                            seconds=payload.seconds, commit=False,
                            current=None if score_id is None else (score_id, value, comment))
        if result.changed:  # the same score for the systems whose identical answers this one shows
            record_for_twins(context.round_id, context.order[label_index(payload.label)], answer_id)
        progress = progress_after_save(context, payload.question_id)
        db.session.commit()
    return {
        "saved": True, "changed": result.changed, "label": payload.label, "value": result.value,
        "comment": result.comment, "saved_at": as_utc(result.saved_at).isoformat(timespec="seconds"),
        "progress": {"done": progress.done, "total": progress.total},
        "question": {"scored": progress.question_scored, "total": progress.question_total},
    }


def scores_by_answer(round_id: int, answer_ids: list[int]) -> dict[int, Score]:
    if not answer_ids:
        return {}
    stmt = select(Score).where(Score.round_id == round_id, Score.answer_id.in_(answer_ids))
    return {score.answer_id: score for score in db.session.scalars(stmt)}


def revisions_of(score_id: int) -> list[ScoreRevision]:
    stmt = select(ScoreRevision).where(ScoreRevision.score_id == score_id).order_by(ScoreRevision.id)
    return list(db.session.scalars(stmt))


def frequencies(study_id: int, round_id: int) -> dict[int, int]:
    """{1: n, …, 5: n}: how often the annotator gave each score to answers the study shows, this round."""
    stmt = (
        select(Score.value, func.count(Score.id))
        .join(StudyAnswer, and_(StudyAnswer.answer_id == Score.answer_id, StudyAnswer.study_id == study_id,
                                ON_PAGE))
        .where(Score.round_id == round_id, COUNTED)
        .group_by(Score.value)
    )
    found = dict(db.session.execute(stmt).all())
    return {value: found.get(value, 0) for value in SCALE}
