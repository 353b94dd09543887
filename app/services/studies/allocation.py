"""Adaptive studies: give an annotator the next document's questions and answers, and say how settled the ranking is.

The policy and the stopping rule are pure (core/allocation.py, where the method and its sources are
described); this module reads the study's state from the database and writes what it gives: the
question to the annotator's share (StudyAssignment, so every rule of assignment.py holds) and each
answer with the step it was given at (StudyAllocation, exported for replay).

Costs counted against the budget: a document read is one (annotator, document) given; an answer
is one answer given to one annotator; hours are the active seconds of the study's scores.
"""
from __future__ import annotations

import math
import secrets
from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.core import allocation as policy
from app.extensions import db
from app.models import (
    AnnotationRound,
    Answer,
    Question,
    Score,
    Study,
    StudyAllocation,
    StudyAnswer,
    StudyAssignment,
    StudyQuestion,
    System,
)
from app.services.sqlite_writer import one_writer
from app.services.studies.membership import SHOWN, in_latest_round, study_scores

# What the results and exports of an adaptive study say about themselves (one owner for the words).
SAMPLING_NOTE = ("Adaptive study: answers were given where the ranking was still uncertain, so its ratings are "
                 "not a uniform sample of questions and systems. Systems are compared on the questions both "
                 "were scored on (paired means), the ranking uses the additive model score = system + question, "
                 "and a correlation with metrics uses only questions on which every compared system was scored.")


def counted_scores(study_id: int, *columns):
    """The study's counted scores in each annotator's latest round (after "begin again" a re-score replaces the
    earlier one: the same annotator on the same answer is never two ratings)."""
    return in_latest_round(study_scores(study_id, *columns), study_id)


def rules_of(study: Study) -> policy.Rules:
    return policy.Rules(tie_margin=study.tie_margin, min_per_answer=study.min_per_answer or 1)


def ratings_of(study_id: int) -> dict[tuple[int, int], list[float]]:
    """{(question, system): [values]}: the study's counted scores on the answers it shows now."""
    ratings: dict[tuple[int, int], list[float]] = defaultdict(list)
    for question_id, system_id, value in db.session.execute(counted_scores(study_id, Answer.question_id,
                                                                             Answer.system_id, Score.value)):
        ratings[(question_id, system_id)].append(float(value))
    return dict(ratings)


def systems_of(study_id: int) -> list[int]:
    """The systems the study shows answers of."""
    return sorted(set(db.session.scalars(
        select(StudyAnswer.system_id).where(StudyAnswer.study_id == study_id, SHOWN))))


@dataclass(frozen=True)
class Spent:
    documents: int
    answers: int
    scored: int
    hours: float


def spent(study_id: int) -> Spent:
    documents = db.session.scalar(select(func.count()).select_from(
        select(StudyAllocation.user_id, StudyAllocation.document_id).distinct()
        .where(StudyAllocation.study_id == study_id).subquery())) or 0
    answers = db.session.scalar(select(func.count(StudyAllocation.id))
                                .where(StudyAllocation.study_id == study_id)) or 0
    scored, seconds = db.session.execute(
        counted_scores(study_id, func.count(Score.id), func.coalesce(func.sum(Score.seconds_spent), 0.0))).one()
    return Spent(documents, answers, scored or 0, float(seconds or 0.0) / 3600)


def budget_left(study: Study, used: Spent) -> tuple[bool, int | None]:
    """(budget still open?, answers that may still be given or None for no answer limit)."""
    if study.budget_documents is not None and used.documents >= study.budget_documents:
        return False, 0
    if study.budget_hours is not None and used.hours >= study.budget_hours:
        return False, 0
    if study.budget_answers is not None:
        left = study.budget_answers - used.answers
        return left > 0, max(left, 0)
    return True, None


def _candidates(study_id: int, user_id: int) -> list[policy.Candidate]:
    """The study's questions not yet given to this annotator, each with its document and shown systems."""
    given = select(StudyAssignment.question_id).where(StudyAssignment.study_id == study_id,
                                                      StudyAssignment.user_id == user_id)
    offered: dict[tuple[int, int], list[int]] = defaultdict(list)
    for question_id, document_id, system_id in db.session.execute(
        select(StudyAnswer.question_id, Question.document_id, StudyAnswer.system_id)
        .join(Question, Question.id == StudyAnswer.question_id)
        .join(StudyQuestion, (StudyQuestion.study_id == study_id) & (StudyQuestion.question_id == Question.id))
        .where(StudyAnswer.study_id == study_id, SHOWN, StudyAnswer.question_id.not_in(given))
        .order_by(StudyQuestion.position)
    ):
        offered[(question_id, document_id)].append(system_id)
    return [policy.Candidate(q, d, tuple(sorted(s))) for (q, d), s in offered.items()]


def _pending(study_id: int, ratings: dict) -> dict[tuple[int, int], int]:
    """Answers given and not scored yet, per (question, system)."""
    given = dict(((q, s), n) for q, s, n in db.session.execute(
        select(StudyAllocation.question_id, StudyAnswer.system_id, func.count(StudyAllocation.id))
        .join(StudyAnswer, StudyAnswer.id == StudyAllocation.study_answer_id)
        .where(StudyAllocation.study_id == study_id)
        .group_by(StudyAllocation.question_id, StudyAnswer.system_id)))
    return {cell: n - len(ratings.get(cell, [])) for cell, n in given.items() if n > len(ratings.get(cell, []))}


def document_loads(study_id: int) -> dict[int, int]:
    """Documents given per annotator who has started in the study (a round, or something given)."""
    loads = dict.fromkeys(db.session.scalars(
        select(AnnotationRound.annotator_id).where(AnnotationRound.study_id == study_id).distinct()), 0)
    for user_id, n in db.session.execute(
        select(StudyAllocation.user_id, func.count(func.distinct(StudyAllocation.document_id)))
        .where(StudyAllocation.study_id == study_id).group_by(StudyAllocation.user_id)):
        loads[user_id] = n
    return loads


# Why nothing was given.
SETTLED, BUDGET, EXHAUSTED, AHEAD = "settled", "budget", "exhausted", "ahead"


@dataclass(frozen=True)
class Given:
    question_id: int | None          # the first question given (None: nothing given)
    reason: str | None = None        # SETTLED, BUDGET, EXHAUSTED or AHEAD when nothing was given
    step: int | None = None
    answers: int = 0


def give_next(study: Study, user_id: int, rng=None) -> Given:
    """Choose the next document, questions and answers for this annotator and give them (or say why not)."""
    rng = rng or secrets.SystemRandom()
    with one_writer():
        result = _give(study, user_id, rng)
        db.session.commit()
    return result


def _give(study: Study, user_id: int, rng) -> Given:
    used = spent(study.id)
    open_budget, answers_left = budget_left(study, used)
    if not open_budget:
        return Given(None, BUDGET)
    if not policy.within_balance(document_loads(study.id), user_id):
        return Given(None, AHEAD)
    ratings = ratings_of(study.id)
    rules = rules_of(study)
    status = policy.study_status(ratings, systems_of(study.id), rules)
    if status.settled:
        return Given(None, SETTLED)
    read = set(db.session.scalars(select(StudyAllocation.document_id).where(
        StudyAllocation.study_id == study.id, StudyAllocation.user_id == user_id)))
    choice = policy.choose(status, ratings, _candidates(study.id, user_id), read, rules, rng,
                           pending=_pending(study.id, ratings), max_answers=answers_left)
    if choice is None:
        return Given(None, EXHAUSTED)
    step = (db.session.scalar(select(func.max(StudyAllocation.step)).where(StudyAllocation.study_id == study.id))
            or 0) + 1
    slots = {(q, s): slot for slot, q, s in db.session.execute(
        select(StudyAnswer.id, StudyAnswer.question_id, StudyAnswer.system_id)
        .where(StudyAnswer.study_id == study.id, SHOWN, StudyAnswer.question_id.in_(list(choice.answers))))}
    count = 0
    try:
        for question_id, systems in choice.answers.items():
            db.session.add(StudyAssignment(study_id=study.id, user_id=user_id, question_id=question_id))
            for system_id in systems:
                db.session.add(StudyAllocation(study_id=study.id, user_id=user_id, question_id=question_id,
                                               study_answer_id=slots[(question_id, system_id)],
                                               document_id=choice.document, step=step))
                count += 1
        db.session.flush()
    except IntegrityError:
        db.session.rollback()  # the same annotator asked twice at once; the other request gave it
        return Given(None, None)
    return Given(next(iter(choice.answers)), None, step, count)


# -- the live status (study page, `study show --json`) ----------------------------------------------


@dataclass(frozen=True)
class PairView:
    higher: str
    lower: str
    state: str
    n_questions: int
    mean_difference: float | None
    p_value: float | None
    questions_left: int | None
    documents_left: int | None
    answers_left: int | None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class AllocationStatus:
    settled: bool
    stopped: str | None              # SETTLED or BUDGET once the study should stop
    ranking: list[str]
    pairs: list[PairView]
    spent: Spent
    budget: dict
    correction: str
    note: str = SAMPLING_NOTE
    steps: int = 0
    loads: dict = field(default_factory=dict)

    @property
    def separated(self) -> list[PairView]:
        return [p for p in self.pairs if p.state != policy.OPEN]

    @property
    def unsettled(self) -> list[PairView]:
        return [p for p in self.pairs if p.state == policy.OPEN]

    def to_dict(self) -> dict:
        return {"allocation": "adaptive", "settled": self.settled, "stopped": self.stopped, "ranking": self.ranking,
                "settled_pairs": [p.to_dict() for p in self.separated],
                "unsettled_pairs": [p.to_dict() for p in self.unsettled],
                "spent": dict(self.spent.__dict__), "budget": self.budget, "steps": self.steps,
                "correction": self.correction, "note": self.note}


def allocation_status(study: Study) -> AllocationStatus:
    """The stopping rule now: each adjacent pair separated, tied or open (with what is left to settle it)."""
    ratings = ratings_of(study.id)
    status = policy.study_status(ratings, systems_of(study.id), rules_of(study))
    names = dict(db.session.execute(select(System.id, System.name).where(System.id.in_(status.ranking))).all())
    documents = db.session.scalar(select(func.count(func.distinct(Question.document_id)))
                                  .join(StudyQuestion, StudyQuestion.question_id == Question.id)
                                  .where(StudyQuestion.study_id == study.id)) or 1
    questions = db.session.scalar(select(func.count()).select_from(StudyQuestion)
                                  .where(StudyQuestion.study_id == study.id)) or 1
    per_document = questions / documents
    pairs = []
    for p in status.pairs:
        left = p.questions_left
        pairs.append(PairView(
            names.get(p.higher, str(p.higher)), names.get(p.lower, str(p.lower)), p.state, p.n, p.mean_difference,
            p.p_value, left, None if left is None else math.ceil(left / per_document),
            None if left is None else left * (2 + policy.FILLERS)))
    used = spent(study.id)
    open_budget, _ = budget_left(study, used)
    stopped = SETTLED if status.settled else (None if open_budget else BUDGET)
    steps = db.session.scalar(select(func.max(StudyAllocation.step)).where(StudyAllocation.study_id == study.id)) or 0
    return AllocationStatus(
        settled=status.settled, stopped=stopped, ranking=[names.get(s, str(s)) for s in status.ranking],
        pairs=pairs, spent=used, correction=status.correction, steps=steps,
        budget={"documents": study.budget_documents, "answers": study.budget_answers, "hours": study.budget_hours,
                "min_per_answer": study.min_per_answer or 1, "tie_margin": study.tie_margin},
    )
