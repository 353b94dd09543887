"""One question of a study, read-only, for the disagreements page: each shown answer beside the scores each
annotator gave it and its metric values.

Scores are those of each annotator's latest round on the answer version the study shows now; metric
values only when they were computed on that same text (services.results.metric_values).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select

from app.extensions import db
from app.models import (
    AnnotationRound,
    Answer,
    Document,
    MetricResult,
    Prediction,
    Question,
    Reference,
    Score,
    StudyAnswer,
    System,
    User,
)
from app.services.results.metric_values import AUTOMATIC_METRICS
from app.services.studies.membership import in_latest_round
from app.services.studies.membership import shown_answers, study_scores


@dataclass
class AnswerView:
    system: str
    text: str
    words: int
    scores: list[tuple[str, int, str]] = field(default_factory=list)  # (annotator, score, comment)
    metrics: dict[str, float] = field(default_factory=dict)  # label -> value, on this text only
    metrics_current: bool = True  # False: the prediction changed since the study pinned this text

    @property
    def mean_score(self) -> float | None:
        return sum(s for _, s, _ in self.scores) / len(self.scores) if self.scores else None


@dataclass
class QuestionView:
    question_id: int
    instruction: str
    task: str
    document: str
    references: list[tuple[str, str]]
    answers: list[AnswerView]
    annotators: list[str]
    metric_labels: list[str]


def question_view(study_id: int, question_id: int, profile: str) -> QuestionView | None:
    """The question as the study shows it; None when the study does not show it."""
    rows = db.session.execute(
        shown_answers(study_id, Answer.id, System.name, Answer.text, Answer.word_count, Answer.sha256,
                      Prediction.id, Prediction.text_sha256)
        .join(Prediction, Prediction.id == Answer.prediction_id)
        .where(StudyAnswer.question_id == question_id)
    ).all()
    if not rows:
        return None
    question, document = db.session.execute(
        select(Question, Document).join(Document, Document.id == Question.document_id).where(Question.id == question_id)
    ).one()
    answers = {answer_id: AnswerView(system=system, text=text, words=words, metrics_current=sha == current_sha)
               for answer_id, system, text, words, sha, _, current_sha in rows}
    _add_scores(study_id, question_id, answers)
    labels = dict(AUTOMATIC_METRICS)
    current = {prediction_id: answer_id for answer_id, *_, sha, prediction_id, current_sha in rows if sha == current_sha}
    for prediction_id, metric, value in db.session.execute(
        select(MetricResult.prediction_id, MetricResult.metric, MetricResult.value)
        .where(MetricResult.prediction_id.in_(list(current)), MetricResult.profile == profile,
               MetricResult.metric.in_(list(labels)))
    ):
        answers[current[prediction_id]].metrics[labels[metric]] = value
    references = [("Reference used for scoring", question.reference)] + [
        (ref.label, ref.text) for ref in db.session.scalars(
            select(Reference).where(Reference.question_id == question_id).order_by(Reference.id))
        if ref.text != question.reference
    ]
    ordered = sorted(answers.values(), key=lambda a: (a.mean_score is None, -(a.mean_score or 0), a.system.lower()))
    annotators = sorted({name for a in ordered for name, _, _ in a.scores}, key=str.lower)
    shown_labels = [label for _, label in AUTOMATIC_METRICS if any(label in a.metrics for a in ordered)]
    return QuestionView(question_id=question.id, instruction=question.instruction, task=document.task,
                        document=document.title, references=references, answers=ordered, annotators=annotators,
                        metric_labels=shown_labels)


def _add_scores(study_id: int, question_id: int, answers: dict[int, AnswerView]) -> None:
    stmt = (
        in_latest_round(study_scores(study_id, Score.answer_id, User.username, Score.value, Score.comment), study_id)
        .join(User, User.id == AnnotationRound.annotator_id)
        .where(Answer.question_id == question_id)
    )
    for answer_id, annotator, value, comment in db.session.execute(stmt):
        if answer_id in answers:
            answers[answer_id].scores.append((annotator, value, comment or ""))
    for answer in answers.values():
        answer.scores.sort(key=lambda item: item[0].lower())
