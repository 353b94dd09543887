"""What the rater rates in a study: every answer the study shows, with the question and the references
the study shows its annotators (never the document), and the key the analyses identify it by."""
from __future__ import annotations

from dataclasses import dataclass

from app.core.rater import RatingItem
from app.extensions import db
from app.models import Answer, Document, Question, Study, System
from app.services.annotation.pages import shown_references
from app.services.studies.membership import shown_answers


@dataclass(frozen=True)
class StudyItem:
    item: RatingItem  # item_id is the answer id
    answer_id: int
    system: str
    key: tuple[str, str, str]  # (system, document id, question id), as the score records name an item

    @property
    def document_id(self) -> int:
        return int(self.key[1])


def study_items(study: Study) -> list[StudyItem]:
    """The study's shown answers in question order, each with what an annotator sees beside it."""
    rows = db.session.execute(
        shown_answers(study.id, Answer.id, Answer.text, System.name, Question.id, Question.instruction, Document.id)
        .order_by(Document.id, Question.position, System.name)
    ).all()
    references: dict[int, tuple[tuple[str, str], ...]] = {}
    items = []
    for answer_id, text, system, question_id, instruction, document_id in rows:
        if question_id not in references:
            references[question_id] = tuple(shown_references(study, question_id)[0])
        items.append(StudyItem(RatingItem(answer_id, instruction, references[question_id], text), answer_id, system,
                               (system, str(document_id), str(question_id))))
    return items
