"""What an annotator scores in a study: its questions (those assigned, with an overlap), each with
the answers the study shows.

Order is the study's question order, which is document-first by default, so a long text is read
once for all its questions.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import func

from app.core.text import normalize_ws, shared_lead
from app.extensions import db
from app.models import (
    Answer,
    Document,
    Question,
    Score,
    Study,
    StudyAnswer,
    StudyQuestion,
)
from app.services.studies.assignment import answer_in_share, in_share
from app.services.studies.membership import ON_PAGE, shown_answers, study_scores

SNIPPET_CHARS = 90


@dataclass
class QuestionSlot:
    question_id: int
    document_id: int
    document_title: str
    task: str
    position: int
    instruction: str
    total: int
    scored: int = 0
    # Leading characters this question shares with the others on its document (set by Workload.groups).
    shared: int = 0

    @property
    def done(self) -> bool:
        return self.scored >= self.total

    @property
    def snippet(self) -> str:
        """The question for a list: without the preamble its document's questions share, shortened."""
        text = normalize_ws(self.instruction)[self.shared:]
        return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"


@dataclass
class DocumentGroup:
    document_id: int
    title: str
    task: str
    slots: list[QuestionSlot] = field(default_factory=list)

    @property
    def done(self) -> int:
        return sum(1 for s in self.slots if s.done)


@dataclass
class Workload:
    slots: list[QuestionSlot]

    def __post_init__(self) -> None:
        self._index = {slot.question_id: i for i, slot in enumerate(self.slots)}

    @property
    def total(self) -> int:
        return sum(s.total for s in self.slots)

    @property
    def done(self) -> int:
        return sum(min(s.scored, s.total) for s in self.slots)

    @property
    def complete(self) -> bool:
        return bool(self.slots) and all(s.done for s in self.slots)

    def slot(self, question_id: int) -> QuestionSlot | None:
        i = self._index.get(question_id)
        return None if i is None else self.slots[i]

    def position(self, question_id: int) -> int:
        """1-based place of the question in the whole workload."""
        return self._index[question_id] + 1

    def neighbours(self, question_id: int) -> tuple[QuestionSlot | None, QuestionSlot | None]:
        i = self._index[question_id]
        before = self.slots[i - 1] if i > 0 else None
        after = self.slots[i + 1] if i + 1 < len(self.slots) else None
        return before, after

    def first_open(self) -> QuestionSlot | None:
        """The first question, in document-first order, that still has unscored answers."""
        return next((s for s in self.slots if not s.done), None)

    def resume_at(self, last_question_id: int | None) -> QuestionSlot | None:
        """Where to resume: the question last worked on if it has unscored answers, else the next open one."""
        if last_question_id not in self._index:
            return self.first_open()
        start = self._index[last_question_id]
        ordered = self.slots[start:] + self.slots[:start]
        return next((s for s in ordered if not s.done), None)

    def groups(self) -> list[DocumentGroup]:
        groups: list[DocumentGroup] = []
        for slot in self.slots:
            if not groups or groups[-1].document_id != slot.document_id:
                groups.append(DocumentGroup(slot.document_id, slot.document_title, slot.task))
            groups[-1].slots.append(slot)
        for group in groups:
            lead = shared_lead([slot.instruction for slot in group.slots])
            for slot in group.slots:
                slot.shared = lead
        return groups

    def document_index(self, question_id: int) -> tuple[int, int]:
        """(n, m): the question's document is the n-th of m documents in this workload."""
        documents = list(dict.fromkeys(s.document_id for s in self.slots))
        return documents.index(self.slot(question_id).document_id) + 1, len(documents)

    def document_place(self, question_id: int) -> tuple[int, int]:
        """(n, m): the question is the n-th of m questions of its document in this workload."""
        slot = self.slot(question_id)
        same = [s.question_id for s in self.slots if s.document_id == slot.document_id]
        return same.index(question_id) + 1, len(same)


def shown_answer_counts(study_id: int, annotator_id: int | None = None) -> list[tuple]:
    """Rows (question, document, title, task, position, instruction, answers) in the study's order.

    With an annotator, only the questions in their share (see assignment.in_share).
    """
    stmt = (
        shown_answers(study_id, Question.id, Question.document_id, Document.title, Document.task, StudyQuestion.position,
                      Question.instruction, func.count(StudyAnswer.id))
        .join(StudyQuestion, (StudyQuestion.study_id == study_id) & (StudyQuestion.question_id == Question.id))
        .where(ON_PAGE)  # identical answers once, as the page shows them
        .group_by(Question.id, Document.id, StudyQuestion.position)
        .order_by(StudyQuestion.position)
    )
    if annotator_id is not None:
        stmt = stmt.where(in_share(study_id, annotator_id, Question.id),
                          answer_in_share(study_id, annotator_id, StudyAnswer.id))
    return list(db.session.execute(stmt))


def scored_counts(study_id: int, round_id: int) -> dict[int, int]:
    """{question id: answers the study shows now that this round has scored}."""
    stmt = (
        study_scores(study_id, Answer.question_id, func.count(Score.id), on_page=True)
        .where(Score.round_id == round_id)
        .group_by(Answer.question_id)
    )
    return dict(db.session.execute(stmt).all())


def load_workload(study: Study, round_id: int | None, annotator_id: int) -> Workload:
    """The annotator's questions in order, each with how many of its answers the round has scored."""
    scored = scored_counts(study.id, round_id) if round_id is not None else {}
    slots = [
        QuestionSlot(
            question_id=qid, document_id=doc_id, document_title=title, task=task, position=position,
            instruction=instruction, total=total, scored=scored.get(qid, 0),
        )
        for qid, doc_id, title, task, position, instruction, total in shown_answer_counts(study.id, annotator_id)
    ]
    return Workload(slots)
