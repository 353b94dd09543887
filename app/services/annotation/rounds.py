"""Annotation rounds: in each study, an annotator has one open round; "begin again" archives it."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.extensions import db
from app.models import COUNTED, AnnotationRound, Answer, Score
from app.models.base import utcnow

OPEN = "open"
ARCHIVED = "archived"


def find_open_round(study_id: int, annotator_id: int) -> AnnotationRound | None:
    """Return the annotator's open round in the study, if any."""
    stmt = (
        select(AnnotationRound)
        .where(AnnotationRound.study_id == study_id, AnnotationRound.annotator_id == annotator_id,
               AnnotationRound.status == OPEN)
        .order_by(AnnotationRound.number.desc())
        .limit(1)
    )
    return db.session.scalars(stmt).first()


def open_round(study_id: int, annotator_id: int) -> AnnotationRound:
    """Return the annotator's open round in the study, opening the next one if there is none."""
    current = find_open_round(study_id, annotator_id)
    if current is not None:
        return current
    last = db.session.scalar(select(func.max(AnnotationRound.number)).where(
        AnnotationRound.study_id == study_id, AnnotationRound.annotator_id == annotator_id))
    new_round = AnnotationRound(study_id=study_id, annotator_id=annotator_id, number=(last or 0) + 1, status=OPEN)
    db.session.add(new_round)
    try:
        db.session.commit()
    except IntegrityError:
        # Two first requests raced (two tabs); the other one opened the round.
        db.session.rollback()
        current = find_open_round(study_id, annotator_id)
        if current is None:
            raise
        return current
    return new_round


class BeginAgainError(ValueError):
    """Begin again was asked for an annotator who has nothing to start over."""


@dataclass(frozen=True)
class BeginAgainResult:
    archived_number: int
    archived_scores: int
    new_number: int


def begin_again(study_id: int, annotator_id: int, by_user_id: int) -> BeginAgainResult:
    """Archive the annotator's open round in the study (its scores are kept) and open the next one."""
    current = find_open_round(study_id, annotator_id)
    if current is None:
        raise BeginAgainError("This annotator has not started scoring yet: there is nothing to begin again.")
    kept = db.session.scalar(select(func.count(Score.id)).where(Score.round_id == current.id, COUNTED)) or 0
    current.status = ARCHIVED
    current.archived_at = utcnow()
    current.archived_by_id = by_user_id
    db.session.flush()
    new_round = AnnotationRound(study_id=study_id, annotator_id=annotator_id, number=current.number + 1, status=OPEN)
    db.session.add(new_round)
    db.session.commit()
    return BeginAgainResult(archived_number=current.number, archived_scores=kept, new_number=new_round.number)


@dataclass(frozen=True)
class RoundSummary:
    id: int
    number: int
    status: str
    scores: int
    started_at: datetime
    archived_at: datetime | None


def rounds_of(study_id: int, annotator_ids: list[int]) -> dict[int, list[RoundSummary]]:
    """Every round of these annotators in the study with its score count, newest first."""
    if not annotator_ids:
        return {}
    counts = (
        select(Score.round_id, func.count(Score.id).label("n")).where(COUNTED).group_by(Score.round_id).subquery()
    )
    stmt = (
        select(AnnotationRound, func.coalesce(counts.c.n, 0))
        .outerjoin(counts, counts.c.round_id == AnnotationRound.id)
        .where(AnnotationRound.study_id == study_id, AnnotationRound.annotator_id.in_(annotator_ids))
        .order_by(AnnotationRound.annotator_id, AnnotationRound.number.desc())
    )
    result: dict[int, list[RoundSummary]] = {}
    for round_, n in db.session.execute(stmt):
        result.setdefault(round_.annotator_id, []).append(RoundSummary(
            id=round_.id, number=round_.number, status=round_.status, scores=n,
            started_at=round_.started_at, archived_at=round_.archived_at,
        ))
    return result



def last_worked_question(round_id: int) -> int | None:
    """The question of the round's latest save: where the annotator stopped working."""
    return db.session.scalar(
        select(Answer.question_id).join(Score, Score.answer_id == Answer.id)
        .where(Score.round_id == round_id).order_by(Score.updated_at.desc(), Score.id.desc()).limit(1)
    )
