"""Who may score, open and read what: one rule (services/studies/assignment.py) for pages, saves and documents.

Saves obey the page's rule (an annotator removed from a study, a question given to someone else,
a closed study: 404, nothing stored); the document panel serves only documents of questions the
account may score; "every account may score" is an explicit choice, and an empty list on a
restricted study is refused with nothing changed (web form and `study create`). The walk over
every id-taking route is tests/web/test_idor.py.
"""
from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select, update

from app.extensions import db
from app.models import AnnotationRound, QuestionView, Score, ScoreRevision, Study, StudyAnnotator, StudyAssignment, User
from app.services.accounts import create_user, set_active
from app.services.annotation.scoring import NOT_YOURS
from app.services.importers import import_path
from app.services.studies.assignment import annotator_ids
from app.services.studies.lookup import studies_for
from app.services.studies.setup import EMPTY_LIST, set_annotators, set_status
from tests.support.access_world import World, build_world, save_body, sign_in
from tests.support.study_data import write_study_set


@pytest.fixture
def world(demo, tmp_path) -> World:
    return build_world(demo, tmp_path / "study-set")


def stored(app) -> tuple[int, ...]:
    with app.app_context():
        return tuple(db.session.scalar(select(func.count()).select_from(model))
                     for model in (Score, ScoreRevision, QuestionView, AnnotationRound))


def save(client, token: str, body: dict):
    return client.post("/annotate/api/score", json=body, headers={"X-CSRFToken": token})


def study_state(app, study_id: int) -> tuple:
    with app.app_context():
        study = db.session.get(Study, study_id)
        given = sorted(db.session.execute(select(StudyAssignment.user_id, StudyAssignment.question_id)
                                          .where(StudyAssignment.study_id == study_id)).all())
        return bool(study.everyone_may_score), annotator_ids(study_id), study.overlap, given


# --- saves follow the page's rule (finding 3) -------------------------------------------------------------------


def test_an_annotator_removed_from_a_study_can_no_longer_save_in_it(world, demo):
    """rex scored question 0 while on the study, then was removed: the very save his page would send is refused."""
    rex, auth = sign_in(demo, "rex")
    token = auth.token()  # read from the first page, which opens rex's round in the demo study
    study, question = world.studies["restricted"], world.questions["restricted"][0]
    before = stored(demo)
    for value in (1, 5):
        refused = save(rex, token, save_body(demo, world.users["rex"], study, question, value=value))
        assert refused.status_code == 404 and refused.get_json() == {"error": NOT_YOURS, "reload": True}
    assert stored(demo) == before
    with demo.app_context():
        assert db.session.scalars(select(Score.value).where(Score.annotator_id == world.users["rex"])).all() == [3]
    assert rex.get(f"/annotate/{study}/").status_code == 404
    assert rex.get(f"/annotate/{study}/q/{question}").status_code == 404


def test_a_question_given_to_another_annotator_can_no_longer_be_saved(world, demo):
    study = world.studies["restricted"]
    question = min(world.share["ada"])
    ada, auth = sign_in(demo, "ada")
    token = auth.token()
    assert ada.get(f"/annotate/{study}/q/{question}").status_code == 200
    assert save(ada, token, save_body(demo, world.users["ada"], study, question, value=4)).status_code == 200
    with demo.app_context():  # a rebalance gives the question to ben
        db.session.execute(update(StudyAssignment).where(StudyAssignment.study_id == study,
                                                         StudyAssignment.question_id == question)
                           .values(user_id=world.users["ben"]))
        db.session.commit()
    before = stored(demo)
    refused = save(ada, token, save_body(demo, world.users["ada"], study, question, value=2))
    assert refused.status_code == 404 and refused.get_json()["reload"] is True
    assert stored(demo) == before
    assert ada.get(f"/annotate/{study}/q/{question}").status_code == 404
    assert ada.get(f"/annotate/document/{world.document_of[question]}").status_code == 404
    ben, _ = sign_in(demo, "ben")
    assert ben.get(f"/annotate/{study}/q/{question}").status_code == 200


def test_a_closed_study_takes_no_saves_until_it_opens_again(world, demo):
    """`annotator` opened the closed study's question while it was open; the save is refused, not asked to reload."""
    client, auth = sign_in(demo, "annotator")
    token = auth.token()
    study, question = world.studies["closed"], world.questions["closed"][0]
    before = stored(demo)
    refused = save(client, token, save_body(demo, world.users["annotator"], study, question))
    assert refused.status_code == 404 and refused.get_json()["error"] == NOT_YOURS
    assert stored(demo) == before
    with demo.app_context():
        set_status(db.session.get(Study, study), "open")
        db.session.commit()
    assert save(client, token, save_body(demo, world.users["annotator"], study, question)).status_code == 200


# --- the document panel (finding 7) -------------------------------------------------------------------------------


def test_the_document_panel_serves_only_documents_of_questions_the_account_may_score(world, demo):
    doc = lambda group, i=0: world.document_of[world.questions[group][i]]  # noqa: E731
    mine, bens = world.document_of[min(world.share["ada"])], world.document_of[min(world.share["ben"])]
    ada, _ = sign_in(demo, "ada")
    assert ada.get(f"/annotate/document/{mine}").status_code == 200
    assert ada.get(f"/annotate/document/{doc('demo')}").status_code == 200
    for refused in (bens, doc("draft"), doc("closed"), doc("none")):
        assert ada.get(f"/annotate/document/{refused}").status_code == 404, refused
    outsider, _ = sign_in(demo, "annotator")
    for refused in (mine, bens, doc("draft")):
        assert outsider.get(f"/annotate/document/{refused}").status_code == 404
    with demo.app_context():  # the text ada read is cached now; taking her off the study still closes it
        set_annotators(db.session.get(Study, world.studies["restricted"]), [world.users["ben"]], 1)
        set_status(db.session.get(Study, world.studies["draft"]), "open")
        db.session.commit()
    assert ada.get(f"/annotate/document/{mine}").status_code == 404
    assert ada.get(f"/annotate/document/{doc('draft')}").status_code == 200  # open to every account now


# --- "every account may score" is a choice (finding 8) ------------------------------------------------------------


def post_annotators(client, auth, study_id: int, **form):
    data = {"csrf_token": auth.token(), "overlap": "", **form}
    return client.post(f"/studies/{study_id}/annotators", data=data, follow_redirects=True)


def test_emptying_a_restricted_study_list_is_refused_and_changes_nothing(world, demo):
    study = world.studies["restricted"]
    staff, auth = sign_in(demo, "researcher")
    before = study_state(demo, study)
    assert before[:3] == (False, sorted([world.users["ada"], world.users["ben"]]), 1)
    # With "only the checked annotators" chosen, and as the page before this change sent it (no choice at all).
    for form in ({"scorers": "listed"}, {}, {"scorers": "listed", "overlap": "1"}):
        page = post_annotators(staff, auth, study, **form).get_data(as_text=True)
        assert EMPTY_LIST in page
        assert study_state(demo, study) == before
    both = post_annotators(staff, auth, study, scorers="everyone", annotator=[str(world.users["ada"])])
    assert "Choose either every account or the checked annotators, not both" in both.get_data(as_text=True)
    assert study_state(demo, study) == before
    outsider, _ = sign_in(demo, "annotator")
    assert "Restricted" not in outsider.get("/annotate/").get_data(as_text=True)
    assert outsider.get(f"/annotate/{study}/").status_code == 404


def test_every_account_may_score_only_once_chosen(world, demo):
    study = world.studies["restricted"]
    staff, auth = sign_in(demo, "researcher")
    outsider, _ = sign_in(demo, "annotator")
    page = post_annotators(staff, auth, study, scorers="everyone").get_data(as_text=True)
    assert "Annotators and overlap saved" in page
    assert re.search(r'value="everyone" checked', page) and "every account may score" in page
    assert study_state(demo, study) == (True, [], None, [])
    assert outsider.get(f"/annotate/{study}/").status_code == 302
    post_annotators(staff, auth, study, scorers="listed", annotator=[str(world.users["ben"])])
    assert study_state(demo, study)[:3] == (False, [world.users["ben"]], None)
    assert outsider.get(f"/annotate/{study}/").status_code == 404


def test_a_restricted_study_that_loses_its_list_opens_to_nobody(world, demo):
    """However the list empties (rows removed by hand, say), a restricted study stays closed to everyone."""
    study = world.studies["restricted"]
    with demo.app_context():
        db.session.query(StudyAnnotator).filter_by(study_id=study).delete()
        db.session.commit()
        for name in ("ada", "annotator"):
            user = db.session.get(User, world.users[name])
            assert study not in [s.id for s in studies_for(user)]
    for name in ("ada", "annotator"):
        client, _ = sign_in(demo, name)
        assert client.get(f"/annotate/{study}/").status_code == 404


def test_a_deactivated_annotator_stays_checked_so_saving_the_form_keeps_them(world, demo):
    with demo.app_context():
        admin = db.session.scalars(select(User).where(User.username == "admin")).one()
        set_active(db.session.get(User, world.users["ada"]), False, by=admin)
    staff, _ = sign_in(demo, "researcher")
    page = staff.get(f"/studies/{world.studies['restricted']}").get_data(as_text=True)
    box = re.search(rf'<input type="checkbox" name="annotator" value="{world.users["ada"]}"( checked)?> ada '
                    r'<span class="muted">annotator</span>( <span class="badge warn">deactivated</span>)?', page)
    assert box and box.group(1) and box.group(2)


@pytest.fixture
def small(app, tmp_path):
    """The app with one document of two questions and two annotators (no demo)."""
    folder = write_study_set(tmp_path / "data", documents=1, questions_each=2)
    with app.app_context():
        assert not import_path(folder).failed
        for name in ("ada", "ben"):
            create_user(name, f"{name}-pass-12345", "annotator")
    return app


def test_the_new_study_form_asks_who_may_score(small):
    staff, auth = sign_in(small, "researcher")

    def create(name: str, **form):
        data = {"csrf_token": auth.token(), "name": name, "description": "", "questions": "human_eval", **form}
        return staff.post("/studies/new", data=data)

    def made(name: str):
        with small.app_context():
            study = db.session.scalars(select(Study).where(Study.name == name)).first()
            return None if study is None else (bool(study.everyone_may_score), len(annotator_ids(study.id)))

    for form in ({}, {"scorers": "listed"}):
        refused = create("Nobody", **form)
        assert refused.status_code == 400 and EMPTY_LIST in refused.get_data(as_text=True)
    assert made("Nobody") is None
    assert "Who may score" in staff.get("/studies/new").get_data(as_text=True)
    assert create("Everyone", scorers="everyone").status_code == 302 and made("Everyone") == (True, 0)
    with small.app_context():
        ada = db.session.scalar(select(User.id).where(User.username == "ada"))
    assert create("Ada only", scorers="listed", annotator=str(ada)).status_code == 302
    assert made("Ada only") == (False, 1)


def test_study_create_refuses_an_annotator_list_naming_nobody(small):
    runner = small.test_cli_runner()
    for empty in ("", " , "):
        refused = runner.invoke(args=["study", "create", "Nobody", "--annotators", empty])
        assert refused.exit_code != 0 and "names nobody" in refused.output, refused.output
    assert "Nobody" not in runner.invoke(args=["study", "list"]).output
    assert runner.invoke(args=["study", "create", "Everyone"]).exit_code == 0
    assert runner.invoke(args=["study", "create", "Pair", "--annotators", "ada,ben"]).exit_code == 0
    listed = {row["name"]: row["annotators"] for row in _json(runner, ["study", "list", "--json"])}
    assert listed == {"Everyone": "everyone", "Pair": 2}
    assert _json(runner, ["study", "show", "Pair", "--json"])["annotators"] == ["ada", "ben"]
    assert _json(runner, ["study", "show", "Everyone", "--json"])["annotators"] == "everyone"


def _json(runner, args):
    import json

    result = runner.invoke(args=args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)
