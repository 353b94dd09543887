"""Who scores what: a study's annotators and its overlap k.

With no overlap set, every annotator of the study scores every answer. With overlap k, each
question (so each of its answers) goes to k of the study's annotators, spreading the answers
evenly; ties go to a random annotator, so nobody can tell from the plan whose questions are
whose. Rebalancing keeps every assignment that already has scores.
"""
from __future__ import annotations

import secrets
from collections import defaultdict

from sqlalchemy import delete, func, select

from app.extensions import db
from app.models import (
    AnnotationRound,
    Answer,
    Score,
    Study,
    StudyAnnotator,
    StudyAnswer,
    StudyAssignment,
    User,
)
from app.services.studies.membership import SHOWN


class AssignmentError(ValueError):
    """An overlap that the study's annotators cannot satisfy."""


def annotator_ids(study_id: int) -> list[int]:
    """The study's own annotator list ([] means: open to every account)."""
    return list(db.session.scalars(select(StudyAnnotator.user_id).where(StudyAnnotator.study_id == study_id)
                                   .order_by(StudyAnnotator.user_id)))


def may_annotate(study: Study, user: User) -> bool:
    """Tell whether this account scores in this study."""
    listed = annotator_ids(study.id)
    return user.id in listed if listed else True


def assigned_questions(study: Study, user_id: int) -> set[int] | None:
    """The questions given to this annotator, or None when the study has no overlap limit."""
    if study.overlap is None:
        return None
    return set(db.session.scalars(select(StudyAssignment.question_id).where(
        StudyAssignment.study_id == study.id, StudyAssignment.user_id == user_id)))


def _answers_per_question(study_id: int) -> dict[int, int]:
    return dict(db.session.execute(
        select(StudyAnswer.question_id, func.count(StudyAnswer.id))
        .where(StudyAnswer.study_id == study_id, SHOWN).group_by(StudyAnswer.question_id)
    ).all())


def _scored_pairs(study_id: int) -> set[tuple[int, int]]:
    """(annotator, question) pairs with at least one score in the study."""
    return set(db.session.execute(
        select(AnnotationRound.annotator_id, Answer.question_id).distinct()
        .join(Score, Score.round_id == AnnotationRound.id).join(Answer, Answer.id == Score.answer_id)
        .where(AnnotationRound.study_id == study_id)
    ).all())


def rebalance(study: Study) -> dict[int, int]:
    """Give each question to `overlap` annotators, evenly by answers; return {annotator id: answers}."""
    if study.overlap is None:
        db.session.execute(delete(StudyAssignment).where(StudyAssignment.study_id == study.id))
        return {}
    people = annotator_ids(study.id)
    if len(people) < study.overlap:
        raise AssignmentError(f"overlap {study.overlap} needs at least {study.overlap} annotators in the study; "
                              f"it has {len(people)}")
    sizes = _answers_per_question(study.id)
    scored = _scored_pairs(study.id)
    current: dict[int, set[int]] = defaultdict(set)
    for user_id, question_id in db.session.execute(select(StudyAssignment.user_id, StudyAssignment.question_id)
                                                   .where(StudyAssignment.study_id == study.id)):
        current[question_id].add(user_id)
    load: dict[int, int] = dict.fromkeys(people, 0)
    plan: dict[int, set[int]] = {}
    # Questions with work already done keep those annotators first.
    for question_id in sorted(sizes, key=lambda q: (-sum((u, q) in scored for u in people), q)):
        keep = sorted((u for u in current[question_id] if u in load and (u, question_id) in scored),
                      key=lambda u: load[u])
        keep += sorted((u for u in current[question_id] if u in load and u not in keep), key=lambda u: load[u])
        chosen = keep[: study.overlap]
        order = list(people)
        secrets.SystemRandom().shuffle(order)  # ties broken at random
        for user_id in sorted(order, key=lambda u: load[u]):
            if len(chosen) >= study.overlap:
                break
            if user_id not in chosen:
                chosen.append(user_id)
        plan[question_id] = set(chosen)
        for user_id in chosen:
            load[user_id] += sizes[question_id]
    db.session.execute(delete(StudyAssignment).where(StudyAssignment.study_id == study.id))
    for question_id, users in sorted(plan.items()):
        for user_id in sorted(users):
            db.session.add(StudyAssignment(study_id=study.id, user_id=user_id, question_id=question_id))
    db.session.flush()
    return load
