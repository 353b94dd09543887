"""The researchers' view of a study: each annotator's progress, and each question's scores against k."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select

from app.extensions import db
from app.models import AnnotationRound, Question, QuestionView, Score, Study, StudyAnswer, StudyQuestion, User
from app.services.studies.assignment import annotator_ids, assigned_questions
from app.services.studies.membership import SHOWN, study_scores
from app.services.annotation.rounds import OPEN, RoundSummary, rounds_of


@dataclass
class AnnotatorProgress:
    user_id: int
    username: str
    role: str
    active: bool
    round_number: int | None
    done: int
    total: int
    last_activity: datetime | None
    earlier_rounds: list[RoundSummary] = field(default_factory=list)

    @property
    def percent(self) -> float:
        return 100.0 * self.done / self.total if self.total else 0.0


def _answers_per_question(study_id: int) -> dict[int, int]:
    return dict(db.session.execute(
        select(StudyAnswer.question_id, func.count(StudyAnswer.id))
        .where(StudyAnswer.study_id == study_id, SHOWN).group_by(StudyAnswer.question_id)
    ).all())


def _done_by_round(study_id: int, round_ids: list[int]) -> dict[int, int]:
    if not round_ids:
        return {}
    stmt = (study_scores(study_id, Score.round_id, func.count(Score.id))
            .where(Score.round_id.in_(round_ids)).group_by(Score.round_id))
    return dict(db.session.execute(stmt).all())


def _last_activity_by_round(round_ids: list[int]) -> dict[int, datetime]:
    if not round_ids:
        return {}
    scored = dict(db.session.execute(
        select(Score.round_id, func.max(Score.updated_at)).where(Score.round_id.in_(round_ids)).group_by(Score.round_id)
    ).all())
    viewed = dict(db.session.execute(
        select(QuestionView.round_id, func.max(QuestionView.first_viewed_at))
        .where(QuestionView.round_id.in_(round_ids)).group_by(QuestionView.round_id)
    ).all())
    return {rid: max(t for t in (scored.get(rid), viewed.get(rid)) if t is not None)
            for rid in set(scored) | set(viewed)}


def study_annotators(study: Study) -> list[User]:
    """The study's listed annotators; for an open-to-all study, every annotator and anyone who scored in it."""
    listed = annotator_ids(study.id)
    if listed:
        stmt = select(User).where(User.id.in_(listed))
    else:
        with_rounds = select(AnnotationRound.annotator_id).where(AnnotationRound.study_id == study.id)
        stmt = select(User).where((User.role == "annotator") | User.id.in_(with_rounds))
    return list(db.session.scalars(stmt.order_by(User.username)))


def annotator_progress(study: Study) -> list[AnnotatorProgress]:
    """One row per annotator of the study, by username: scores in the open round against their share."""
    users = study_annotators(study)
    rounds = rounds_of(study.id, [u.id for u in users])
    open_ids = [r.id for rs in rounds.values() for r in rs if r.status == OPEN]
    done = _done_by_round(study.id, open_ids)
    activity = _last_activity_by_round(open_ids)
    sizes = _answers_per_question(study.id)
    rows = []
    for user in users:
        own = rounds.get(user.id, [])
        current = next((r for r in own if r.status == OPEN), None)
        assigned = assigned_questions(study, user.id)
        total = sum(n for q, n in sizes.items() if assigned is None or q in assigned)
        rows.append(AnnotatorProgress(
            user_id=user.id, username=user.username, role=user.role, active=user.active,
            round_number=current.number if current else None,
            done=done.get(current.id, 0) if current else 0, total=total,
            last_activity=activity.get(current.id) if current else None,
            earlier_rounds=[r for r in own if r.status != OPEN],
        ))
    return rows


@dataclass(frozen=True)
class QuestionCoverage:
    question_id: int
    position: int
    instruction: str
    answers: int
    annotators: int      # how many annotators this question is given to (k, or everyone)
    min_scores: int      # the fewest scores any of its answers has (latest rounds)
    max_scores: int

    @property
    def complete(self) -> bool:
        return self.min_scores >= self.annotators


def question_coverage(study: Study) -> list[QuestionCoverage]:
    """Per question, how many scores its answers have (each annotator's latest round) against k."""
    latest = (select(AnnotationRound.annotator_id, func.max(AnnotationRound.number).label("number"))
              .where(AnnotationRound.study_id == study.id).group_by(AnnotationRound.annotator_id).subquery())
    counts: dict[int, int] = dict(db.session.execute(
        study_scores(study.id, Score.answer_id, func.count(Score.id))
        .join(latest, (latest.c.annotator_id == AnnotationRound.annotator_id)
              & (latest.c.number == AnnotationRound.number))
        .group_by(Score.answer_id)
    ).all())
    per_question: dict[int, list[int]] = defaultdict(list)
    for question_id, answer_id in db.session.execute(
        select(StudyAnswer.question_id, StudyAnswer.answer_id).where(StudyAnswer.study_id == study.id, SHOWN)
    ):
        per_question[question_id].append(counts.get(answer_id, 0))
    everyone = len(study_annotators(study))
    k = study.overlap if study.overlap is not None else everyone
    rows = []
    for question_id, position, instruction in db.session.execute(
        select(StudyQuestion.question_id, StudyQuestion.position, Question.instruction)
        .join(Question, Question.id == StudyQuestion.question_id)
        .where(StudyQuestion.study_id == study.id).order_by(StudyQuestion.position)
    ):
        scores = per_question.get(question_id, [])
        rows.append(QuestionCoverage(question_id, position, instruction, len(scores), k,
                                     min(scores, default=0), max(scores, default=0)))
    return rows

