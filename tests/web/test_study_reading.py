"""What annotators read, through the real pages (issue 35): a fixed study's readings are k × documents, the
study page shows documents per annotator, an adaptive study counts only the answers it gave, and a flagged
annotator is shown with the evidence and can be included again by the owner."""
from __future__ import annotations

import re

from sqlalchemy import select

from app.extensions import db
from app.models import Question, Study, StudyAllocation
from app.services.accounts import create_user
from app.services.importers import import_path
from app.services.studies.setup import StudySpec, create_study
from tests.conftest import AuthActions
from tests.support.scoring_helpers import ANSWERS_RE, QUESTION_ID_RE
from tests.support.study_data import write_study_set

PEOPLE = ("ann", "bea", "cid")


def _accounts(app, folder, **spec):
    with app.app_context():
        assert not import_path(folder).failed
        ids = [create_user(name, f"{name}-pass-12345", "annotator").id for name in PEOPLE]
        study = create_study(StudySpec(name="Reading", status="open", annotator_ids=ids, reference_kinds=[], **spec))
        return study.id, dict(zip(PEOPLE, ids))


def _score_everything(app, study_id: int, name: str, value=lambda sha: 3) -> list[int]:
    """Score every answer the pages give this annotator until the study says there is nothing more; return the
    questions, in the order the pages gave them."""
    client = app.test_client()
    auth = AuthActions(client)
    assert auth.login(name, f"{name}-pass-12345").status_code == 302
    seen = []
    for _ in range(200):
        response = client.get(f"/annotate/{study_id}/")
        location = response.headers.get("Location", "")
        if response.status_code != 302 or "/done" in location:
            break
        page = client.get(location).get_data(as_text=True)
        question = int(QUESTION_ID_RE.search(page).group(1))
        seen.append(question)
        for label, sha in ANSWERS_RE.findall(page):
            saved = client.post("/annotate/api/score", headers={"X-CSRFToken": auth.token()}, json={
                "study": study_id, "question_id": question, "label": label, "value": value(sha), "answer": sha})
            assert saved.status_code == 200, saved.get_data(as_text=True)
    return seen


def test_a_fixed_study_reads_k_times_each_document_through_the_pages(app, client, auth, tmp_path):
    study_id, _ = _accounts(app, write_study_set(tmp_path / "data", documents=4, questions_each=3), overlap=2)
    with app.app_context():
        document_of = dict(db.session.execute(select(Question.id, Question.document_id)).all())
    readings = {name: {document_of[q] for q in _score_everything(app, study_id, name)} for name in PEOPLE}
    assert sum(len(docs) for docs in readings.values()) == 2 * 4  # k × documents, nothing scattered
    assert all(2 <= len(docs) <= 3 for docs in readings.values())  # balanced: 8 readings over 3 annotators
    auth.login("admin")
    page = client.get(f"/studies/{study_id}").get_data(as_text=True)
    for name, docs in readings.items():
        row = re.search(rf'<tr data-annotator="{name}">(.*?)</tr>', page, re.S).group(1)
        assert re.search(rf'data-field="documents">{len(docs)}<', row), row


def test_an_adaptive_study_counts_the_answers_it_gave_and_shows_a_flagged_annotator(app, client, auth, tmp_path):
    study_id, ids = _accounts(app, write_study_set(tmp_path / "data", documents=3, questions_each=5),
                              allocation="adaptive", budget_documents=9)
    # ann and bea score each answer by what it says (the same scores: they agree); cid gives every answer a 3.
    def by_answer(sha: str) -> int:
        return 1 + int(sha[:8], 16) % 5

    seen = {name: _score_everything(app, study_id, name, value)
            for name, value in (("ann", by_answer), ("bea", by_answer), ("cid", lambda sha: 3))}
    assert seen["cid"]  # cid read the calibration document, then was given nothing more
    auth.login("admin")
    page = client.get(f"/studies/{study_id}").get_data(as_text=True)
    with app.app_context():
        given = dict(db.session.execute(select(StudyAllocation.user_id, db.func.count(StudyAllocation.id))
                                        .group_by(StudyAllocation.user_id)).all())
    for name in PEOPLE:
        row = re.search(rf'<tr data-annotator="{name}">(.*?)</tr>', page, re.S).group(1)
        assert re.search(rf"of {given[ids[name]]}<", row), row  # only the answers given count
    reader = re.search(r'<tr data-annotator="cid" data-flag="constant">(.*?)</tr>', page, re.S)
    assert reader and "scores constant" in reader.group(1) and "Include again" in reader.group(1)
    response = client.post(f"/studies/{study_id}/annotators/{ids['cid']}/reliability",
                           data={"include": "1", "csrf_token": auth.token()})
    assert response.status_code == 302
    page = client.get(f"/studies/{study_id}").get_data(as_text=True)
    assert "included again by you" in page
    with app.app_context():
        assert db.session.get(Study, study_id).included_annotators == [ids["cid"]]
