"""Adaptive studies: give an annotator the next document's questions and answers, and say how settled the ranking is.

The policy, the reliability estimates and the stopping rule are pure (core/allocation/, where the method and
its sources are described); this module reads the study's state from the database and writes what it gives:
the question to the annotator's share (StudyAssignment, so every rule of assignment.py holds) and each answer
with the step it was given at (StudyAllocation, exported for replay). Every random choice comes from the
study's stored secret seed and the step, so a study can be replayed.

Costs counted against the budget: a document read is one (annotator, document) given; an answer is one answer
given to one annotator; hours are the active seconds of the study's scores.
"""
from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import func, or_, select
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
)
from app.models.base import as_utc, utcnow
from app.services.sqlite_writer import one_writer
from app.services.studies.assignment import annotator_ids, reading_loads, study_rng
from app.services.studies.membership import SHOWN, in_latest_round, study_scores

# What the results and exports of an adaptive study say about themselves (one owner for the words).
SAMPLING_NOTE = ("Adaptive study: documents went to the annotators who read most reliably and answers where the "
                 "ranking was still uncertain, so its ratings are not a uniform sample of questions, systems and "
                 "annotators. Systems are compared on the questions both were scored on (paired means), the "
                 "ranking uses the additive model score = system + question, and a correlation with metrics uses "
                 "only questions on which every compared system was scored.")

# Why nothing was given.
SETTLED, BUDGET = "settled", "budget"
EXHAUSTED, AHEAD, NOT_NEEDED = policy.EXHAUSTED, policy.WAIT, policy.NOT_NEEDED


def counted_scores(study_id: int, *columns):
    """The study's counted scores in each annotator's latest round (after "begin again" a re-score replaces the
    earlier one: the same annotator on the same answer is never two ratings)."""
    return in_latest_round(study_scores(study_id, *columns), study_id)


def rules_of(study: Study) -> policy.Rules:
    return policy.Rules(tie_margin=study.tie_margin, min_per_answer=study.min_per_answer or 1)


def ratings_of(study_id: int) -> dict[tuple[int, int], dict[int, float]]:
    """{(question, system): {annotator: score}}: the study's counted scores on the answers it shows now."""
    ratings: dict[tuple[int, int], dict[int, float]] = defaultdict(dict)
    for question_id, system_id, annotator_id, value in db.session.execute(counted_scores(
            study_id, Answer.question_id, Answer.system_id, AnnotationRound.annotator_id, Score.value)):
        ratings[(question_id, system_id)][annotator_id] = float(value)
    return dict(ratings)


def systems_of(study_id: int) -> list[int]:
    """The systems the study shows answers of."""
    return sorted(set(db.session.scalars(
        select(StudyAnswer.system_id).where(StudyAnswer.study_id == study_id, SHOWN))))


def given_documents(study_id: int) -> dict[int, frozenset[int]]:
    """{document: the annotators given some of it}."""
    given: dict[int, set[int]] = defaultdict(set)
    for user_id, document_id in db.session.execute(
            select(StudyAllocation.user_id, StudyAllocation.document_id).distinct()
            .where(StudyAllocation.study_id == study_id)):
        given[document_id].add(user_id)
    return {d: frozenset(users) for d, users in given.items()}


def readers_of(study: Study, given: dict[int, frozenset[int]]) -> tuple[int, ...]:
    """Who may read: the listed annotators, or, in a study open to every account, those who have started."""
    if not study.everyone_may_score:
        return tuple(annotator_ids(study.id))
    started = set(db.session.scalars(select(AnnotationRound.annotator_id).where(AnnotationRound.study_id == study.id)))
    return tuple(sorted(started | {u for users in given.values() for u in users}))


def documents_of(study_id: int) -> tuple[policy.Document, ...]:
    """The study's documents with their reading load and the answers the study shows on each."""
    answers = dict(db.session.execute(
        select(Question.document_id, func.count(StudyAnswer.id)).join(Question, Question.id == StudyAnswer.question_id)
        .where(StudyAnswer.study_id == study_id, SHOWN).group_by(Question.document_id)).all())
    loads = reading_loads(answers)
    return tuple(policy.Document(d, loads.get(d, 0.0), n) for d, n in sorted(answers.items()))


@dataclass(frozen=True)
class Spent:
    documents: int
    answers: int
    scored: int
    hours: float


def spent(study_id: int) -> Spent:
    documents = db.session.scalar(select(func.count()).select_from(
        select(StudyAllocation.user_id, StudyAllocation.document_id).distinct()
        .where(StudyAllocation.study_id == study_id).subquery("readings"))) or 0
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
    """Answers given and not scored yet, per (question, system); a slot given counts for its twins too (its
    score is recorded for them)."""
    per_slot = dict(db.session.execute(
        select(StudyAllocation.study_answer_id, func.count(StudyAllocation.id))
        .where(StudyAllocation.study_id == study_id).group_by(StudyAllocation.study_answer_id)).all())
    given: dict[tuple[int, int], int] = defaultdict(int)
    for slot, question_id, system_id, twin_of in db.session.execute(
            select(StudyAnswer.id, StudyAnswer.question_id, StudyAnswer.system_id, StudyAnswer.twin_of_id)
            .where(StudyAnswer.study_id == study_id,
                   or_(StudyAnswer.id.in_(list(per_slot)), StudyAnswer.twin_of_id.in_(list(per_slot))))):
        given[(question_id, system_id)] += per_slot.get(slot, 0) + (per_slot.get(twin_of, 0) if twin_of else 0)
    return {cell: n - len(ratings.get(cell, {})) for cell, n in given.items() if n > len(ratings.get(cell, {}))}


def design_of(study: Study, documents, given: dict[int, frozenset[int]], readers: tuple[int, ...]) -> policy.Design:
    """The study's settings for the policy, with the start guard worked out now."""
    calibration = study.calibration_documents or policy.policy.DEFAULT_CALIBRATION
    waiting = False
    if not study.everyone_may_score or study.start_window_hours is not None:
        behind = policy.not_calibrated(readers, documents, calibration, given)
        started = db.session.scalar(select(func.min(StudyAllocation.created_at))
                                    .where(StudyAllocation.study_id == study.id))
        window_over = (study.start_window_hours is not None and started is not None
                       and utcnow() >= as_utc(started) + timedelta(hours=study.start_window_hours))
        waiting = bool(behind) and not window_over
    return policy.Design(calibration=calibration, readings=study.budget_documents,
                         cap=study.max_documents_per_annotator, included=frozenset(study.included_annotators or ()),
                         waiting_for_others=waiting)


@dataclass(frozen=True)
class Given:
    question_id: int | None          # the first question given (None: nothing given)
    reason: str | None = None        # SETTLED, BUDGET, EXHAUSTED, AHEAD or NOT_NEEDED when nothing was given
    step: int | None = None
    answers: int = 0


def give_next(study: Study, user_id: int, rng: random.Random | None = None) -> Given:
    """Choose the next document, questions and answers for this annotator and give them (or say why not)."""
    with one_writer():
        result = _give(study, user_id, rng)
        db.session.commit()
    return result


def _give(study: Study, user_id: int, rng: random.Random | None) -> Given:
    used = spent(study.id)
    open_budget, answers_left = budget_left(study, used)
    if not open_budget:
        return Given(None, BUDGET)
    ratings = ratings_of(study.id)
    given = given_documents(study.id)
    readers = readers_of(study, given)
    if user_id not in readers:
        readers = (*readers, user_id)
    estimates = policy.reliabilities(ratings, readers)
    design = design_of(study, documents := documents_of(study.id), given, readers)
    status = policy.study_status(ratings, systems_of(study.id), rules_of(study),
                                 policy.weights(estimates, design.included), estimate_left=False)
    if status.settled:
        return Given(None, SETTLED)
    step = (db.session.scalar(select(func.max(StudyAllocation.step)).where(StudyAllocation.study_id == study.id))
            or 0) + 1
    study_rng(study)  # a study from before seeds were stored draws its seed now
    rng = rng or random.Random(f"{study.allocation_seed}:{step}")
    situation = policy.Situation(user_id, readers, documents, given, _candidates(study.id, user_id), ratings,
                                 _pending(study.id, ratings))
    decision = policy.decide(situation, status, rules_of(study), design, rng, answers_left, estimates)
    if decision.choice is None:
        return Given(None, decision.reason or EXHAUSTED)
    choice = decision.choice
    # A system whose answer another system's slot shows (its twin, services/studies/twins.py) is given as that slot:
    # the annotator sees the text once, and the score given there is recorded for every system that gave it.
    slots = {(q, s): twin_of or slot for slot, q, s, twin_of in db.session.execute(
        select(StudyAnswer.id, StudyAnswer.question_id, StudyAnswer.system_id, StudyAnswer.twin_of_id)
        .where(StudyAnswer.study_id == study.id, SHOWN, StudyAnswer.question_id.in_(list(choice.answers))))}
    count = 0
    try:
        for question_id, systems in choice.answers.items():
            db.session.add(StudyAssignment(study_id=study.id, user_id=user_id, question_id=question_id))
            for slot in dict.fromkeys(slots[(question_id, system_id)] for system_id in systems):
                db.session.add(StudyAllocation(study_id=study.id, user_id=user_id, question_id=question_id,
                                               study_answer_id=slot, document_id=choice.document, step=step))
                count += 1
        db.session.flush()
    except IntegrityError:
        db.session.rollback()  # the same annotator asked twice at once; the other request gave it
        return Given(None, None)
    return Given(next(iter(choice.answers)), None, step, count)


def include_again(study: Study, user_id: int, include: bool = True) -> None:
    """The owner lets a flagged annotator read on (their scores count again), or takes that back."""
    included = [u for u in (study.included_annotators or []) if u != user_id]
    study.included_annotators = [*included, user_id] if include else included


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
class ReaderView:
    """One annotator of an adaptive study: how reliably they read, and what they were given."""

    user_id: int
    username: str
    documents: int
    calibrated: bool
    noise_sd: float | None
    noise_sd_se: float | None
    compared: int
    signal: float | None
    flag: str | None
    included: bool

    @property
    def counts(self) -> bool:
        return self.flag is None or self.included

    def to_dict(self) -> dict:
        return {**self.__dict__, "counts": self.counts}


@dataclass(frozen=True)
class AllocationStatus:
    settled: bool
    stopped: str | None              # SETTLED or BUDGET once the study should stop
    ranking: list[str]
    pairs: list[PairView]
    spent: Spent
    budget: dict
    correction: str
    readers: list[ReaderView]
    calibration: list[int]
    note: str = SAMPLING_NOTE
    steps: int = 0

    @property
    def separated(self) -> list[PairView]:
        return [p for p in self.pairs if p.state != policy.OPEN]

    @property
    def unsettled(self) -> list[PairView]:
        return [p for p in self.pairs if p.state == policy.OPEN]

    @property
    def flagged(self) -> list[ReaderView]:
        return [r for r in self.readers if r.flag]

    def to_dict(self) -> dict:
        return {"allocation": "adaptive", "settled": self.settled, "stopped": self.stopped, "ranking": self.ranking,
                "settled_pairs": [p.to_dict() for p in self.separated],
                "unsettled_pairs": [p.to_dict() for p in self.unsettled],
                "annotators": [r.to_dict() for r in self.readers], "calibration_documents": self.calibration,
                "spent": dict(self.spent.__dict__), "budget": self.budget, "steps": self.steps,
                "correction": self.correction, "note": self.note}


def _sd(variance: float | None) -> float | None:
    return None if variance is None else variance ** 0.5


def allocation_status(study: Study) -> AllocationStatus:
    """The stopping rule now: each adjacent pair separated, tied or open (with what is left to settle it), and
    each annotator's reliability with its evidence."""
    from app.models import System, User

    ratings = ratings_of(study.id)
    given = given_documents(study.id)
    readers = readers_of(study, given)
    estimates = policy.reliabilities(ratings, readers)
    included = frozenset(study.included_annotators or ())
    status = policy.study_status(ratings, systems_of(study.id), rules_of(study), policy.weights(estimates, included))
    names = dict(db.session.execute(select(System.id, System.name).where(System.id.in_(status.ranking))).all())
    documents = documents_of(study.id)
    per_document = max(1.0, sum(d.answers for d in documents) / max(len(documents), 1) / max(len(status.ranking), 1))
    pairs = []
    for p in status.pairs:
        left = p.questions_left
        pairs.append(PairView(
            names.get(p.higher, str(p.higher)), names.get(p.lower, str(p.lower)), p.state, p.n, p.mean_difference,
            p.p_value, left, None if left is None else -(-left // int(per_document)),
            None if left is None else left * (2 + policy.FILLERS)))
    groups = policy.calibration_groups(documents, study.calibration_documents or 1, len(readers))
    calibration = sorted(d for group in groups for d in group)
    usernames = dict(db.session.execute(select(User.id, User.username).where(User.id.in_(readers))).all())
    loads: dict[int, int] = defaultdict(int)
    for users in given.values():
        for user in users:
            loads[user] += 1
    views = []
    for user in sorted(readers, key=lambda u: usernames.get(u, "")):
        estimate = estimates.get(user)
        variance = estimate.noise_variance if estimate else None
        se = estimate.noise_se if estimate else None
        views.append(ReaderView(
            user, usernames.get(user, str(user)), loads.get(user, 0),
            policy.is_calibrated(user, groups, given), _sd(variance),
            None if se is None or not variance else se / (2 * variance ** 0.5),
            estimate.compared if estimate else 0, estimate.signal if estimate else None,
            estimate.flag if estimate else None, user in included))
    used = spent(study.id)
    open_budget, _ = budget_left(study, used)
    stopped = SETTLED if status.settled else (None if open_budget else BUDGET)
    steps = db.session.scalar(select(func.max(StudyAllocation.step)).where(StudyAllocation.study_id == study.id)) or 0
    return AllocationStatus(
        settled=status.settled, stopped=stopped, ranking=[names.get(s, str(s)) for s in status.ranking],
        pairs=pairs, spent=used, correction=status.correction, steps=steps, readers=views, calibration=calibration,
        budget={"documents": study.budget_documents, "answers": study.budget_answers, "hours": study.budget_hours,
                "min_per_answer": study.min_per_answer or 1, "tie_margin": study.tie_margin,
                "calibration_documents": study.calibration_documents or 1,
                "start_window_hours": study.start_window_hours,
                "max_documents_per_annotator": study.max_documents_per_annotator},
    )
