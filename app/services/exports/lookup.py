"""Find the stored questions, systems and answers that an imported score refers to."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import select

from app.core.text import match_key, normalize_ws, sha256_text
from app.extensions import db
from app.models import Answer, Document, Question, StudyQuestion, System
from app.services.exports.leval import study_systems
from app.services.studies.membership import shown_answers


@dataclass(frozen=True)
class StoredQuestion:
    id: int
    document_sha256: str
    position: int
    instruction: str


@dataclass(frozen=True)
class StoredAnswer:
    id: int
    text: str
    sha256: str


class StudyIndex:
    """Lookups over one study's questions, systems and answer versions, loaded once per imported file."""

    def __init__(self, study_id: int) -> None:
        self.study_id = study_id
        self.by_key: dict[str, list[StoredQuestion]] = defaultdict(list)
        self.by_query: dict[str, list[StoredQuestion]] = defaultdict(list)
        self.documents: dict[str, list[StoredQuestion]] = defaultdict(list)
        stmt = (
            select(Question.id, Document.sha256, Question.position, Question.instruction, Question.match_key)
            .join(Document, Document.id == Question.document_id)
            .join(StudyQuestion, StudyQuestion.question_id == Question.id)
            .where(StudyQuestion.study_id == study_id)
            .order_by(Document.id, Question.position)
        )
        for question_id, document_sha, position, instruction, key in db.session.execute(stmt):
            question = StoredQuestion(question_id, document_sha, position, instruction)
            self.by_key[key].append(question)
            self.by_query[normalize_ws(instruction)].append(question)
            self.documents[document_sha].append(question)
        systems = db.session.scalars(select(System)).all()
        self.systems = {system.name: system for system in systems}
        keys: dict[str, list[System]] = defaultdict(list)
        for system in study_systems(study_id):  # the same systems as the export's pred_keys()
            keys[system.pred_key].append(system)
        self.systems_by_pred_key = {key: found[0] for key, found in keys.items() if key and len(found) == 1}
        # What the study shows now, and every stored version (a stale score names an older one).
        self.shown: dict[tuple[int, int], StoredAnswer] = {}
        for system_id, question_id, answer_id, text, sha in db.session.execute(shown_answers(
                study_id, Answer.system_id, Answer.question_id, Answer.id, Answer.text, Answer.sha256)):
            self.shown[(system_id, question_id)] = StoredAnswer(answer_id, text, sha)
        self.versions: dict[tuple[int, int, str], StoredAnswer] = {}
        for system_id, question_id, answer_id, text, sha in db.session.execute(
            select(Answer.system_id, Answer.question_id, Answer.id, Answer.text, Answer.sha256)
            .join(StudyQuestion, StudyQuestion.question_id == Answer.question_id)
            .where(StudyQuestion.study_id == study_id)
        ):
            self.versions[(system_id, question_id, sha)] = StoredAnswer(answer_id, text, sha)

    def find_questions(self, query: str, gt: str | None, document_sha256: str | None) -> list[StoredQuestion]:
        """Match by (query, gt) like prediction files, or by the query alone when gt is absent."""
        found = self.by_key.get(match_key(query, gt), []) if gt is not None else self.by_query.get(normalize_ws(query), [])
        if document_sha256 and len(found) > 1:
            found = [question for question in found if question.document_sha256 == document_sha256]
        return found

    def document_questions(self, text: str) -> list[StoredQuestion] | None:
        """Return the study's questions on the document with exactly this text, in order."""
        return self.documents.get(sha256_text(text))

    def system_for_pred_key(self, key: str) -> System | None:
        """Resolve `<model>_pred`: the system whose files use that key, else the system named <model>."""
        return self.systems_by_pred_key.get(key) or self.systems.get(key.removesuffix("_pred"))
