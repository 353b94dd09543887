"""Everything the question page shows, gathered for one annotator in one study: blind answers only."""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from app.core.text import display_answer
from app.extensions import db
from app.models import AnnotationRound, Document, Question, Reference, Study
from app.models.corpus import REFERENCE_LABELS
from app.services.annotation.blinding import ensure_view, visible_answers
from app.services.annotation.documents import document_version
from app.services.annotation.rounds import find_open_round, last_worked_question, open_round
from app.services.annotation.scoring import scores_by_answer
from app.services.annotation.workload import QuestionSlot, Workload, load_workload
from app.services.studies import allocation
from app.services.studies.references import hidden_kinds


@dataclass(frozen=True)
class AnswerCard:
    """An answer as the annotator sees it: a label, its text laid out for display (core.text.display_answer)
    and the sha256 of the stored text (what a save is checked against), never its system."""

    label: str
    text: str
    sha256: str
    value: int | None
    comment: str


@dataclass(frozen=True)
class QuestionPage:
    study: Study
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
    hidden_references: int
    answers: list[AnswerCard]


def shown_references(study: Study, question_id: int) -> tuple[list[tuple[str, str]], int]:
    """The references the study shows on this question, in its order, and how many it hides here."""
    stored = dict(db.session.execute(
        select(Reference.kind, Reference.text).where(Reference.question_id == question_id)
    ).all())
    hidden = hidden_kinds(study.id, question_id)
    kinds = [kind for kind in study.reference_kinds or [] if kind in stored]
    shown = [(REFERENCE_LABELS.get(kind, f"{kind} reference"), stored[kind]) for kind in kinds if kind not in hidden]
    return shown, sum(1 for kind in kinds if kind in hidden)


def load_question_page(study: Study, annotator_id: int, question_id: int) -> QuestionPage | None:
    """The page for one question of the annotator's workload in the study, or None if it is not in it.

    The round is opened only for a question of the workload: a refused page writes nothing.
    """
    current = find_open_round(study.id, annotator_id)
    workload = load_workload(study, current.id if current else None, annotator_id)
    slot = workload.slot(question_id)
    if slot is None:
        return None
    round_ = current or open_round(study.id, annotator_id)  # a new round has no scores: the workload stands
    view = ensure_view(round_, question_id)  # records the blind order and the first-view time
    answers = visible_answers(view, study.id)
    scores = scores_by_answer(round_.id, [a.answer_id for a in answers])
    cards = []
    for answer in answers:
        score = scores.get(answer.answer_id)
        cards.append(AnswerCard(answer.label, display_answer(answer.text), answer.sha256,
                                score.value if score else None, score.comment if score else ""))
    item = db.session.execute(
        select(Question.instruction, Document.id, Document.title, Document.task, Document.sha256, Document.word_count)
        .join(Document, Question.document_id == Document.id)
        .where(Question.id == question_id)
    ).one()
    references, hidden = shown_references(study, question_id)
    return QuestionPage(
        study=study, round=round_, workload=workload, slot=slot, instruction=item.instruction, document_id=item.id,
        document_title=item.title, task=item.task, word_count=item.word_count,
        document_version=document_version(item.sha256), references=references, hidden_references=hidden,
        answers=cards,
    )


@dataclass(frozen=True)
class NextQuestion:
    question_id: int | None
    reason: str | None  # why there is none (adaptive): allocation.SETTLED, BUDGET, EXHAUSTED, AHEAD or NOT_NEEDED


def next_question(study: Study, annotator_id: int) -> NextQuestion:
    """Where the annotator goes next: the question last worked on if it has unscored answers, else the next
    open one; in an adaptive study with nothing open, the server gives the next document's questions
    (studies/allocation.py), so an annotator finishes what they were given before getting more."""
    round_ = open_round(study.id, annotator_id)
    slot = load_workload(study, round_.id, annotator_id).resume_at(last_worked_question(round_.id))
    if slot is not None or not study.adaptive or study.status != "open":
        return NextQuestion(slot.question_id if slot else None, None)
    given = allocation.give_next(study, annotator_id)
    return NextQuestion(given.question_id, given.reason)
