"""Saving scores: validated 1–5 integers, idempotent, with every change kept as a revision."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from ...extensions import db
from ...models import AnnotationRound, Prediction, QuestionView, Score, ScoreRevision, System
from ...models.base import utcnow

SCORE_VALUES = (1, 2, 3, 4, 5)
MAX_COMMENT = 4000

# The rubric shown beside every score control; anchored so that annotators agree on levels.
RUBRIC = (
    (1, "Poor", "Wrong, irrelevant or unsupported by the document."),
    (2, "Weak", "Touches the question but misses the key point or contains major errors."),
    (3, "Fair", "Partly correct: important omissions or some errors."),
    (4, "Good", "Correct and relevant; small omissions or imprecision."),
    (5, "Excellent", "Correct, complete and faithful to the document; as good as the references."),
)


class ScoreError(ValueError):
    """A save that cannot be accepted; `status` is the HTTP status to answer with."""

    def __init__(self, message: str, *, status: int = 400, field: str | None = None):
        super().__init__(message)
        self.message, self.status, self.field = message, status, field


@dataclass(frozen=True)
class ScoreInput:
    question_id: int
    label: str
    value: int
    comment: str
    round_number: int | None


def _strict_int(value: object) -> bool:
    # bool is an int subclass in Python: true/false must not pass as 1/0.
    return isinstance(value, int) and not isinstance(value, bool)


def parse_score_payload(data: object) -> ScoreInput:
    """Validate the JSON body {question_id, label, value, comment?, round?}."""
    if not isinstance(data, dict):
        raise ScoreError("Send a JSON object.")
    question_id = data.get("question_id")
    if not _strict_int(question_id) or question_id < 1:
        raise ScoreError("question_id must be a positive integer.", field="question_id")
    label = data.get("label")
    if not isinstance(label, str) or not label:
        raise ScoreError("label must name an answer, such as \"A\".", field="label")
    value = data.get("value")
    if not _strict_int(value) or value not in SCORE_VALUES:
        raise ScoreError("Score must be a whole number from 1 to 5.", field="value")
    comment = data.get("comment", "")
    if comment is None:
        comment = ""
    if not isinstance(comment, str):
        raise ScoreError("comment must be text.", field="comment")
    comment = comment.replace("\r\n", "\n").strip()
    if len(comment) > MAX_COMMENT:
        raise ScoreError(f"Comment is too long ({len(comment)} characters; at most {MAX_COMMENT}).", field="comment")
    round_number = data.get("round")
    if round_number is not None and not _strict_int(round_number):
        raise ScoreError("round must be an integer.", field="round")
    return ScoreInput(question_id, label, value, comment, round_number)


@dataclass(frozen=True)
class SaveResult:
    score: Score
    changed: bool


def as_utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; they were stored in UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def save_score(
    round_: AnnotationRound, view: QuestionView, prediction_id: int, label: str, value: int, comment: str,
    *, now: datetime | None = None, _retry: bool = True,
) -> SaveResult:
    """Store a score; the same value and comment again change nothing (safe to retry)."""
    now = now or utcnow()
    seconds = max(0.0, (now - as_utc(view.first_viewed_at)).total_seconds())
    stmt = select(Score).where(Score.round_id == round_.id, Score.prediction_id == prediction_id)
    score = db.session.scalars(stmt).first()
    if score is not None and score.value == value and score.comment == comment:
        return SaveResult(score, changed=False)
    if score is None:
        score = Score(
            round_id=round_.id, annotator_id=round_.annotator_id, prediction_id=prediction_id, value=value,
            comment=comment, answer_label=label, seconds_spent=seconds, created_at=now, updated_at=now,
        )
        score.revisions.append(ScoreRevision(old_value=None, new_value=value, old_comment=None,
                                             new_comment=comment, changed_at=now))
        db.session.add(score)
    else:
        db.session.add(ScoreRevision(score_id=score.id, old_value=score.value, new_value=value,
                                     old_comment=score.comment, new_comment=comment, changed_at=now))
        score.value, score.comment, score.answer_label = value, comment, label
        score.seconds_spent, score.updated_at = seconds, now
    try:
        db.session.commit()
    except IntegrityError:
        # A retried request raced its first attempt; read what that one stored and compare again.
        db.session.rollback()
        if not _retry:
            raise
        return save_score(round_, view, prediction_id, label, value, comment, now=now, _retry=False)
    return SaveResult(score, changed=True)


def scores_by_prediction(round_id: int, prediction_ids: list[int]) -> dict[int, Score]:
    if not prediction_ids:
        return {}
    stmt = select(Score).where(Score.round_id == round_id, Score.prediction_id.in_(prediction_ids))
    return {score.prediction_id: score for score in db.session.scalars(stmt)}


def revisions_of(score_id: int) -> list[ScoreRevision]:
    stmt = select(ScoreRevision).where(ScoreRevision.score_id == score_id).order_by(ScoreRevision.id)
    return list(db.session.scalars(stmt))


def frequencies(round_id: int) -> dict[int, int]:
    """{1: n, …, 5: n}: how often the annotator gave each score to included answers this round."""
    stmt = (
        select(Score.value, func.count(Score.id))
        .join(Prediction, Score.prediction_id == Prediction.id)
        .join(System, Prediction.system_id == System.id)
        .where(Score.round_id == round_id, System.in_human_eval.is_(True))
        .group_by(Score.value)
    )
    found = dict(db.session.execute(stmt).all())
    return {value: found.get(value, 0) for value in SCORE_VALUES}
