"""A world of studies that annotators may and may not reach, for the access tests and the IDOR walk.

Built on the demo (its study is open to every account) plus a study set of six one-question
documents (tests/support/study_data.py):

- "Restricted": open, questions 0-2, annotators ada and ben with overlap 1 (each question is one
  of theirs). rex was on it, opened question 0 and scored it, and was then removed.
- "Draft": question 3, every account may score, never opened.
- "Closed": question 4, every account may score; `annotator` opened its question, then it closed.
- question 5 and its document are in no study.

What may be reached is written here from how the world was built, never asked of the code under
test: `allowed_pairs`, `allowed_studies` and `allowed_documents` are the expectations.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select

from app.extensions import db
from app.models import (
    Answer, Document, Question, QuestionView, Study, StudyAnswer, StudyAssignment, StudyQuestion, User,
)
from app.services.accounts import create_user
from app.services.annotation.pages import load_question_page
from app.services.annotation.rounds import find_open_round
from app.services.importers import import_path
from app.services.studies.lookup import find_study
from app.services.studies.setup import StudySpec, create_study, set_annotators, set_status
from tests.conftest import PASSWORDS, AuthActions
from tests.support.study_data import write_study_set

# Accounts made here, with their passwords; `annotator`, `researcher` and `admin` come from conftest.
PEOPLE = {"ada": "ada-pass-12345", "ben": "ben-pass-12345", "rex": "rex-pass-12345"}
# Annotator roles of the walk: listed (ada, ben), removed (rex), never listed (annotator).
ANNOTATORS = ("ada", "ben", "rex", "annotator")


def password_of(username: str) -> str:
    return PEOPLE.get(username) or PASSWORDS[username]


def sign_in(app, username: str):
    """A new test client signed in as `username`, and its AuthActions."""
    client = app.test_client()
    auth = AuthActions(client)
    response = auth.login(username, password_of(username))
    assert response.status_code == 302, response.get_data(as_text=True)[:300]
    return client, auth


@dataclass
class World:
    studies: dict[str, int]                       # name → id: demo, restricted, draft, closed
    questions: dict[str, list[int]]               # study name → its questions, in order; "none": in no study
    users: dict[str, int]                         # username → id
    share: dict[str, set[int]]                    # ada, ben → their restricted questions
    document_of: dict[int, int]                   # question → document
    documents: list[int] = field(default_factory=list)  # every document

    def allowed_studies(self, username: str) -> set[int]:
        open_to = {self.studies["demo"]}
        if username in self.share:
            open_to.add(self.studies["restricted"])
        return open_to

    def allowed_pairs(self, username: str) -> set[tuple[int, int]]:
        """(study, question) this account may score."""
        pairs = {(self.studies["demo"], q) for q in self.questions["demo"]}
        return pairs | {(self.studies["restricted"], q) for q in self.share.get(username, ())}

    def allowed_documents(self, username: str) -> set[int]:
        return {self.document_of[q] for _, q in self.allowed_pairs(username)}

    def every_pair(self) -> list[tuple[int, int]]:
        """Each study with each of its questions and the first question of every other group."""
        pairs = []
        for name, study_id in self.studies.items():
            own = self.questions[name]
            others = [qs[0] for other, qs in self.questions.items() if other != name]
            pairs += [(study_id, q) for q in own + others]
        return pairs


def _shown_sha(study_id: int, question_id: int, annotator_id: int) -> str:
    """The text behind label A as this annotator's page shows it, else of any answer of the question."""
    round_ = find_open_round(study_id, annotator_id)
    view = None if round_ is None else db.session.scalars(select(QuestionView).where(
        QuestionView.round_id == round_.id, QuestionView.question_id == question_id)).first()
    slot = view.order[0] if view is not None and view.order else None
    stmt = select(Answer.sha256).join(StudyAnswer, StudyAnswer.answer_id == Answer.id)
    stmt = stmt.where(StudyAnswer.id == slot) if slot else stmt.where(Answer.question_id == question_id)
    return db.session.scalars(stmt).first() or "0" * 64


def save_body(app, annotator_id: int, study_id: int, question_id: int, value: int = 3) -> dict:
    """A save exactly as the annotator's page would send it: only the access rule can tell it from a real one."""
    with app.app_context():
        sha = _shown_sha(study_id, question_id, annotator_id)
    return {"study": study_id, "question_id": question_id, "label": "A", "answer": sha, "value": value,
            "comment": "walk", "seconds": 5}


def build_world(app, folder) -> World:
    """Import the study set into an app with the demo loaded and build the studies described above."""
    write_study_set(folder, documents=6, questions_each=1)
    with app.app_context():
        # Imported beside the demo as demo data: real data would hide the demo study from everyone (first-hour #1).
        assert not import_path(folder, demo=True).failed
        for name, password in PEOPLE.items():
            create_user(name, password, "annotator")
        users = dict(db.session.execute(select(User.username, User.id)).all())
        ours = list(db.session.scalars(select(Question.id).join(Document, Document.id == Question.document_id)
                                       .where(Document.source_file.like("%study.ref.jsonl")).order_by(Question.id)))
        assert len(ours) == 6, ours
        demo = find_study(name="Demo")
        restricted = create_study(StudySpec(name="Restricted", question_ids=ours[:3], status="open",
                                            annotator_ids=[users["ada"], users["ben"], users["rex"]]))
        draft = create_study(StudySpec(name="Draft", question_ids=[ours[3]]))
        closed = create_study(StudySpec(name="Closed", question_ids=[ours[4]], status="open"))
        studies = {"demo": demo.id, "restricted": restricted.id, "draft": draft.id, "closed": closed.id}
        # rex and `annotator` each open a question (a round and a view) while they may.
        assert load_question_page(restricted, users["rex"], ours[0]) is not None
        assert load_question_page(closed, users["annotator"], ours[4]) is not None
    rex, rex_auth = sign_in(app, "rex")
    body = save_body(app, users["rex"], studies["restricted"], ours[0])
    assert rex.post("/annotate/api/score", json=body, headers={"X-CSRFToken": rex_auth.token()}).status_code == 200
    with app.app_context():
        set_annotators(db.session.get(Study, studies["restricted"]), [users["ada"], users["ben"]], 1)
        set_status(db.session.get(Study, studies["closed"]), "closed")
        db.session.commit()
        share = {name: set(db.session.scalars(select(StudyAssignment.question_id).where(
            StudyAssignment.study_id == studies["restricted"], StudyAssignment.user_id == users[name])))
            for name in ("ada", "ben")}
        assert share["ada"] and share["ben"] and not share["ada"] & share["ben"]
        questions = {name: list(db.session.scalars(
            select(StudyQuestion.question_id).where(StudyQuestion.study_id == study_id)
            .order_by(StudyQuestion.position)))
            for name, study_id in studies.items()}
        questions["none"] = [ours[5]]
        document_of = dict(db.session.execute(select(Question.id, Question.document_id)).all())
        documents = list(db.session.scalars(select(Document.id).order_by(Document.id)))
    return World(studies, questions, users, share, document_of, documents)

