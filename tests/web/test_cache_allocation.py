"""The study page's cached counts follow every change of who reads what (issue 38 with issue 35's allocation).

The study page keeps its progress rows until the study's data change (services/cache). Each test warms
the page, changes the allocation the way the app does (an adaptive study giving a document, the owner
sharing a fixed study out again, a start sharing out a study made before documents were shared), and
reads the page again: it must show the new share, never the cached one.
"""
from __future__ import annotations

import re

from sqlalchemy import delete, select

from app.cli.serve import check_migrated_studies
from app.extensions import db
from app.models import Question, Study, StudyAllocation, StudyAssignment
from app.services.accounts import create_user
from app.services.importers import import_path
from app.services.studies.setup import StudySpec, create_study
from tests.conftest import AuthActions
from tests.support.study_data import write_study_set

PEOPLE = ("ann", "bea", "cid")


def _study(app, folder, **spec) -> tuple[int, dict[str, int]]:
    with app.app_context():
        assert not import_path(folder).failed
        ids = [create_user(name, f"{name}-pass-12345", "annotator").id for name in PEOPLE]
        study = create_study(StudySpec(name="Reading", status="open", annotator_ids=ids, reference_kinds=[], **spec))
        return study.id, dict(zip(PEOPLE, ids))


def _progress(client, study_id: int) -> dict[str, tuple[int, str]]:
    """{annotator: (documents to read, "scored of total")} as the study page's progress table shows them."""
    page = client.get(f"/studies/{study_id}").get_data(as_text=True)
    found = {}
    for name, row in re.findall(r'<tr data-annotator="([^"]+)"[^>]*>(.*?)</tr>', page, re.S):
        documents = re.search(r'data-field="documents">(\d+)<', row)  # the progress table's row
        if documents:
            found[name] = (int(documents.group(1)), re.search(r'data-field="scored">([^<]*)<', row).group(1))
    return found


def _documents(client, study_id: int) -> dict[str, int]:
    return {name: documents for name, (documents, _) in _progress(client, study_id).items()}


def test_an_adaptive_study_giving_a_document_shows_on_the_warm_study_page(app, client, auth, tmp_path):
    study_id, ids = _study(app, write_study_set(tmp_path / "data", documents=3, questions_each=2),
                           allocation="adaptive", budget_documents=6)
    auth.login("admin")
    not_started = "not started (answers are given as they go)"
    assert _progress(client, study_id) == dict.fromkeys(PEOPLE, (0, not_started))
    reader = app.test_client()
    assert AuthActions(reader).login("ann", "ann-pass-12345").status_code == 302
    assert "/q/" in reader.get(f"/annotate/{study_id}/").headers["Location"]  # a document is given now
    with app.app_context():
        given = db.session.scalar(select(db.func.count(StudyAllocation.id))
                                  .where(StudyAllocation.user_id == ids["ann"]))
    assert given > 0
    assert _progress(client, study_id) == {"ann": (1, f"0 of {given}"), "bea": (0, not_started),
                                           "cid": (0, not_started)}


def test_sharing_a_fixed_study_out_again_shows_on_the_warm_study_page(app, client, auth, tmp_path):
    study_id, ids = _study(app, write_study_set(tmp_path / "data", documents=4, questions_each=2), overlap=2)
    auth.login("admin")
    before = _documents(client, study_id)
    assert sum(before.values()) == 2 * 4
    response = client.post(f"/studies/{study_id}/annotators", data={
        "csrf_token": auth.token(), "overlap": "2", "annotator": [str(ids["ann"]), str(ids["bea"])]})
    assert response.status_code == 302
    assert _documents(client, study_id) == {"ann": 4, "bea": 4}  # two annotators at k = 2 read everything


def test_a_start_sharing_out_a_study_made_before_shows_on_the_warm_study_page(app, client, auth, tmp_path):
    """A study shared by question (everyone on every document) is shared out by document at the next start."""
    study_id, ids = _study(app, write_study_set(tmp_path / "data", documents=4, questions_each=3), overlap=2)
    people = list(ids.values())
    with app.app_context():
        questions = list(db.session.scalars(select(Question.id).order_by(Question.document_id, Question.position)))
        db.session.execute(delete(StudyAssignment).where(StudyAssignment.study_id == study_id))
        for i, question in enumerate(questions):  # the old plan: question i to annotators i and i+1 (mod 3)
            for user in (people[i % 3], people[(i + 1) % 3]):
                db.session.add(StudyAssignment(study_id=study_id, user_id=user, question_id=question))
        db.session.get(Study, study_id).shared_by_document = False
        db.session.commit()
    auth.login("admin")
    assert _documents(client, study_id) == dict.fromkeys(PEOPLE, 4)  # scattered over every document
    with app.app_context():
        check_migrated_studies()
    assert sum(_documents(client, study_id).values()) == 2 * 4
