"""Everything the question page shows, gathered for one annotator: blind answers only."""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from ...extensions import db
from ...models import AnnotationRound, Document, Question, Reference
from ...models.corpus import REFERENCE_KINDS, REFERENCE_LABELS
from .blinding import ensure_view, visible_answers
from .documents import document_version
from .rounds import open_round
from .scoring import scores_by_prediction
from .workload import QuestionSlot, Workload, load_workload


@dataclass(frozen=True)
class AnswerCard:
    """An answer as the annotator sees it: a label and a text, never its system."""

    label: str
    text: str
    value: int | None
    comment: str


@dataclass(frozen=True)
class QuestionPage:
    round: AnnotationRound
    workload: Workload
    slot: QuestionSlot
    instruction: str
    document_id: int
    document_title: str
    task: str
    word_count: int
    document_version: str
    references: list[tuple[str, str]]
    answers: list[AnswerCard]


def load_question_page(annotator_id: int, question_id: int) -> QuestionPage | None:
    """The page for one question of the annotator's workload, or None if it is not in it."""
    round_ = open_round(annotator_id)
    workload = load_workload(round_.id)
    slot = workload.slot(question_id)
    if slot is None:
        return None
    view = ensure_view(round_, question_id)  # records the blind order and the first-view time
    answers = visible_answers(view)
    scores = scores_by_prediction(round_.id, [a.prediction_id for a in answers])
    cards = []
    for answer in answers:
        score = scores.get(answer.prediction_id)
        cards.append(AnswerCard(answer.label, answer.text, score.value if score else None, score.comment if score else ""))
    item = db.session.execute(
        select(Question.instruction, Document.id, Document.title, Document.task, Document.sha256, Document.word_count)
        .join(Document, Question.document_id == Document.id)
        .where(Question.id == question_id)
    ).one()
    stored = dict(db.session.execute(
        select(Reference.kind, Reference.text).where(Reference.question_id == question_id)
    ).all())
    return QuestionPage(
        round=round_, workload=workload, slot=slot, instruction=item.instruction, document_id=item.id,
        document_title=item.title, task=item.task, word_count=item.word_count,
        document_version=document_version(item.sha256),
        references=[(REFERENCE_LABELS[kind], stored[kind]) for kind in REFERENCE_KINDS if kind in stored],
        answers=cards,
    )
