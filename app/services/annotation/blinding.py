"""Blind, shuffled answers: each annotator sees a question's answers as A, B, … in their own order.

The order of a question's answer slots is drawn from the operating system's secure random source
the first time the annotator opens the question in a round, and stored in QuestionView, so it is
the same on every visit and exports can tell which label an annotator saw. Nothing an annotator
receives (labels, texts, page ids, cookies) predicts the system behind a label better than chance,
and the same label is a different system on every question. A slot added later (a system joining
the study) is appended in random order; labels already seen never move, and slots no longer
shown keep their place.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app.extensions import db
from app.models import AnnotationRound, Answer, QuestionView, StudyAnswer
from app.services.annotation.payload import answer_label
from app.services.annotation.scoring import resolve_in_order
from app.services.studies.assignment import answer_in_share
from app.services.studies.membership import ON_PAGE

_RANDOM = secrets.SystemRandom()


def shuffled(ids: list[int]) -> list[int]:
    """Return the ids in an order drawn from a cryptographically secure source."""
    order = list(ids)
    _RANDOM.shuffle(order)
    return order


def shown_slot_ids(study_id: int, question_id: int, annotator_id: int) -> list[int]:
    """The slots of this question that the study shows this annotator (in an adaptive study, those given to them);
    identical answers once (membership.ON_PAGE)."""
    return list(db.session.scalars(
        select(StudyAnswer.id).where(StudyAnswer.study_id == study_id, StudyAnswer.question_id == question_id, ON_PAGE,
                                     answer_in_share(study_id, annotator_id, StudyAnswer.id))
    ))


def find_view(round_id: int, question_id: int) -> QuestionView | None:
    stmt = select(QuestionView).where(QuestionView.round_id == round_id, QuestionView.question_id == question_id)
    return db.session.scalars(stmt).first()


def ensure_view(round_: AnnotationRound, question_id: int) -> QuestionView:
    """Return the annotator's view of a question, recording its order and first-view time once."""
    shown = shown_slot_ids(round_.study_id, question_id, round_.annotator_id)
    view = find_view(round_.id, question_id)
    if view is None:
        view = QuestionView(round_id=round_.id, question_id=question_id, order=shuffled(shown))
        db.session.add(view)
        try:
            db.session.commit()
        except IntegrityError:
            # The same question opened twice at once (two tabs): keep the first view.
            db.session.rollback()
            view = find_view(round_.id, question_id)
            if view is None:
                raise
        return view
    seen = set(view.order)
    missing = [slot for slot in shown if slot not in seen]
    if missing:
        view.order = list(view.order) + shuffled(missing)
        db.session.commit()
    return view


@dataclass(frozen=True)
class BlindAnswer:
    label: str
    answer_id: int
    text: str
    sha256: str


def visible_answers(view: QuestionView, study_id: int) -> list[BlindAnswer]:
    """The view's shown answers, in the stored order, each with the label of its place in that order."""
    if not view.order:
        return []
    stmt = (
        select(StudyAnswer.id, Answer.id, Answer.text, Answer.sha256)
        .join(Answer, Answer.id == StudyAnswer.answer_id)
        .where(StudyAnswer.id.in_(view.order), StudyAnswer.study_id == study_id, ON_PAGE)
    )
    shown = {slot: (answer_id, text, sha) for slot, answer_id, text, sha in db.session.execute(stmt)}
    return [
        BlindAnswer(label=answer_label(i), answer_id=shown[slot][0], text=shown[slot][1], sha256=shown[slot][2])
        for i, slot in enumerate(view.order)
        if slot in shown
    ]


def resolve_label(view: QuestionView, study_id: int, label: str):
    """The answer shown behind a label now, or None."""
    return resolve_in_order(view.order, study_id, label)
