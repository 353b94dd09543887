"""Which answers a study shows, and which of its scores count: one owner for both rules.

A study shows, on each of its questions, the pinned answer version of every system in it (slots of
systems that left the study are kept but not shown, so labels never move). A score counts for the
study when it was given in one of the study's rounds to the answer version the study shows now;
any other score of the study is stale: kept and exported, never counted by default.
"""
from __future__ import annotations

from sqlalchemy import ColumnElement, Select, and_, func, select

from app.extensions import db
from app.models import (
    COUNTED,
    AnnotationRound,
    Answer,
    Document,
    Question,
    Score,
    StudyAnswer,
    System,
)

SHOWN: ColumnElement[bool] = StudyAnswer.excluded.is_(False)
# The slots an annotator's page shows and scores: the shown ones, except a slot whose text shows the same as another
# slot of the question, which the page shows once for both (its twin; services/studies/twins.py). A twin's
# slot is still shown in the study's sense: its system has the score, which results count.
ON_PAGE: ColumnElement[bool] = and_(SHOWN, StudyAnswer.twin_of_id.is_(None))


def shown_answers(study_id: int, *columns) -> Select:
    """Select `columns` over the answers the study shows (StudyAnswer, Answer, System, Question, Document joined)."""
    return (
        select(*columns).select_from(StudyAnswer)
        .join(Answer, Answer.id == StudyAnswer.answer_id)
        .join(System, System.id == StudyAnswer.system_id)
        .join(Question, Question.id == StudyAnswer.question_id)
        .join(Document, Document.id == Question.document_id)
        .where(StudyAnswer.study_id == study_id, SHOWN)
    )


def count_shown(study_id: int) -> int:
    """How many answers the study shows: what one annotator scoring everything scores."""
    return db.session.scalar(shown_answers(study_id, func.count(StudyAnswer.id))) or 0


def study_scores(study_id: int, *columns, include_stale: bool = False, on_page: bool = False) -> Select:
    """Select `columns` over the study's scores (Score, AnnotationRound, Answer, System, Question, Document joined).

    Cleared scores (no value) are never among them.

    Only scores of the answer version the study shows now, on a slot still shown, unless
    `include_stale`; then every score given in the study's rounds. With `on_page`, only those on the slots
    the annotator's page shows (ON_PAGE: a twin's recorded copy is left out), for its progress.
    """
    stmt = (
        select(*columns).select_from(Score)
        .join(AnnotationRound, AnnotationRound.id == Score.round_id)
        .join(Answer, Answer.id == Score.answer_id)
        .join(System, System.id == Answer.system_id)
        .join(Question, Question.id == Answer.question_id)
        .join(Document, Document.id == Question.document_id)
        .where(AnnotationRound.study_id == study_id, COUNTED)  # a cleared score is no score
    )
    if include_stale:
        return stmt
    return stmt.join(StudyAnswer, and_(
        StudyAnswer.study_id == study_id, StudyAnswer.answer_id == Score.answer_id, ON_PAGE if on_page else SHOWN,
    ))


def latest_rounds(study_id: int):
    """Subquery of (annotator_id, number) of each annotator's latest round in the study: after \"begin again\",
    the round whose scores count (earlier rounds are kept, exported, never counted twice)."""
    return (
        select(AnnotationRound.annotator_id, func.max(AnnotationRound.number).label("number"))
        .where(AnnotationRound.study_id == study_id)
        .group_by(AnnotationRound.annotator_id)
        .subquery()
    )


def in_latest_round(stmt: Select, study_id: int) -> Select:
    """Keep only the scores of each annotator's latest round (`stmt` selects over Score and AnnotationRound)."""
    latest = latest_rounds(study_id)
    return stmt.join(latest, (latest.c.annotator_id == AnnotationRound.annotator_id)
                     & (latest.c.number == AnnotationRound.number))


def is_current_condition(study_id: int) -> ColumnElement[bool]:
    """For queries over Score: true when the score is on an answer the study shows now."""
    return Score.answer_id.in_(
        select(StudyAnswer.answer_id).where(StudyAnswer.study_id == study_id, SHOWN)
    )
