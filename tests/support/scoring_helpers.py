"""Shared set-up for the scoring tests: the demo data, extra annotators, signed-in clients."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import System, User
from app.services.accounts import create_user
from tests.conftest import PASSWORDS, AuthActions

SECOND = ("annotator2", "annotate-pass-456")
QUESTION_ID_RE = re.compile(r'data-question-id="(\d+)"')
ANSWERS_RE = re.compile(r'data-label="([A-Z]+)" data-answer="([0-9a-f]{64})"')
STUDY_RE = re.compile(r"/annotate/(\d+)/")


@pytest.fixture
def demo(demo):
    """The shared demo fixture (2 documents, 10 human-eval questions, 4 systems → 40 answers) and a second annotator."""
    with demo.app_context():
        create_user(*SECOND, "annotator")
    return demo


def user_id(app, username: str) -> int:
    with app.app_context():
        return db.session.scalar(select(User.id).where(User.username == username))


def system_names(app) -> list[str]:
    with app.app_context():
        return list(db.session.scalars(select(System.name)))


def signed_in(app, username: str = "annotator"):
    """A new test client signed in as `username`, and its AuthActions."""
    client = app.test_client()
    auth = AuthActions(client)
    password = SECOND[1] if username == SECOND[0] else PASSWORDS[username]
    response = auth.login(username, password)
    assert response.status_code == 302, response.get_data(as_text=True)
    return client, auth


def study_of(client) -> int:
    """The study /annotate/ sends this client's annotator to (remembered on the client)."""
    if getattr(client, "study_id", None) is None:
        found = STUDY_RE.search(client.get("/annotate/").headers.get("Location", ""))
        if found is None:
            return 0  # not signed in, or no single study: the server refuses the save either way
        client.study_id = int(found.group(1))
    return client.study_id


def question_url(client, question_id: int) -> str:
    return f"/annotate/{study_of(client)}/q/{question_id}"


def done_url(client) -> str:
    return f"/annotate/{study_of(client)}/done"


def shown_answers(client, question_id: int) -> dict[str, str]:
    """{label: sha256 of the text} as the question page shows them to this client."""
    page = client.get(question_url(client, question_id)).get_data(as_text=True)
    return dict(ANSWERS_RE.findall(page))


def post_score(client, token: str, **body):
    """POST a save as the page's script does; `study` and `answer` (the shown text's hash) are filled in when absent."""
    body.setdefault("study", study_of(client))
    if "answer" not in body and isinstance(body.get("question_id"), int) and isinstance(body.get("label"), str):
        body["answer"] = shown_answers(client, body["question_id"]).get(body["label"], "0" * 64)
    return client.post("/annotate/api/score", json=body, headers={"X-CSRFToken": token})


def first_question(client) -> int:
    page = client.get("/annotate/", follow_redirects=True).get_data(as_text=True)
    return int(QUESTION_ID_RE.search(page).group(1))
