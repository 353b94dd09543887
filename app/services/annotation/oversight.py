"""The researchers' view: everyone's progress, and which systems are in the human evaluation."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select, update

from ...extensions import db
from ...models import AnnotationRound, Document, Prediction, Question, QuestionView, Score, System, User
from ...models.corpus import HUMAN_EVAL
from .rounds import OPEN, RoundSummary, rounds_of
from .workload import workload_total


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


def _included_done_by_round(round_ids: list[int]) -> dict[int, int]:
    if not round_ids:
        return {}
    stmt = (
        select(Score.round_id, func.count(Score.id))
        .join(Prediction, Score.prediction_id == Prediction.id)
        .join(System, Prediction.system_id == System.id)
        .where(Score.round_id.in_(round_ids), System.in_human_eval.is_(True))
        .group_by(Score.round_id)
    )
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


def annotator_progress() -> list[AnnotatorProgress]:
    """One row per annotator (and per staff member who has scored), by username."""
    with_rounds = select(AnnotationRound.annotator_id).distinct()
    users = list(db.session.scalars(
        select(User).where((User.role == "annotator") | User.id.in_(with_rounds)).order_by(User.username)
    ))
    rounds = rounds_of([u.id for u in users])
    open_ids = [r.id for rs in rounds.values() for r in rs if r.status == OPEN]
    done = _included_done_by_round(open_ids)
    activity = _last_activity_by_round(open_ids)
    total = workload_total()
    rows = []
    for user in users:
        own = rounds.get(user.id, [])
        current = next((r for r in own if r.status == OPEN), None)
        rows.append(AnnotatorProgress(
            user_id=user.id, username=user.username, role=user.role, active=user.active,
            round_number=current.number if current else None,
            done=done.get(current.id, 0) if current else 0, total=total,
            last_activity=activity.get(current.id) if current else None,
            earlier_rounds=[r for r in own if r.status != OPEN],
        ))
    return rows


@dataclass(frozen=True)
class SystemChoice:
    id: int
    name: str
    human_eval_answers: int
    scores: int
    included: bool


def system_choices() -> list[SystemChoice]:
    """Systems with human-eval answers (or included), their answers and scores over all rounds."""
    answers = (
        select(Prediction.system_id, func.count(Prediction.id).label("n"))
        .join(Question, Prediction.question_id == Question.id)
        .join(Document, Question.document_id == Document.id)
        .where(Document.collection == HUMAN_EVAL)
        .group_by(Prediction.system_id)
        .subquery()
    )
    scores = (
        select(Prediction.system_id, func.count(Score.id).label("n"))
        .join(Score, Score.prediction_id == Prediction.id)
        .group_by(Prediction.system_id)
        .subquery()
    )
    stmt = (
        select(System.id, System.name, func.coalesce(answers.c.n, 0), func.coalesce(scores.c.n, 0), System.in_human_eval)
        .outerjoin(answers, answers.c.system_id == System.id)
        .outerjoin(scores, scores.c.system_id == System.id)
        .order_by(System.name)
    )
    choices = [SystemChoice(*row) for row in db.session.execute(stmt)]
    return [c for c in choices if c.human_eval_answers or c.included]


def set_included_systems(system_ids: set[int]) -> tuple[int, int]:
    """Include exactly these systems; scores are never touched. Return (included, excluded)."""
    known = set(db.session.scalars(select(System.id)))
    chosen = system_ids & known
    db.session.execute(update(System).where(System.id.in_(chosen)).values(in_human_eval=True))
    db.session.execute(update(System).where(System.id.not_in(chosen)).values(in_human_eval=False))
    db.session.commit()
    return len(chosen), len(known - chosen)
