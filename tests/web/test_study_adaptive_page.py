"""The study page of an adaptive study shows the ranking's pairs and the budget spent; a fixed one does not."""
from __future__ import annotations

import pytest

from app.services.importers import import_path
from app.services.studies.setup import StudySpec, create_study
from tests.support.study_data import write_study_set


def test_the_study_page_shows_pairs_and_budget(app, client, auth, tmp_path):
    folder = write_study_set(tmp_path / "data", documents=2, questions_each=3)
    with app.app_context():
        assert not import_path(folder).failed
        adaptive = create_study(StudySpec(name="Active", status="open", allocation="adaptive", budget_documents=5)).id
        fixed = create_study(StudySpec(name="Fixed", status="open")).id
    auth.login("researcher")
    page = client.get(f"/studies/{adaptive}").get_data(as_text=True)
    assert 'id="ranking-pairs"' in page and "not settled yet" in page
    assert "0 of 5 documents read" in page and page.count('data-state="open"') == 3
    assert "not a uniform sample" in page
    assert 'id="ranking-pairs"' not in client.get(f"/studies/{fixed}").get_data(as_text=True)


def test_results_of_an_adaptive_study_say_so_and_use_common_questions(app, client, auth, tmp_path):
    from app.core.stats.records import on_common_questions
    from app.services.results.assemble import analyse

    folder = write_study_set(tmp_path / "data", documents=2, questions_each=3)
    with app.app_context():
        assert not import_path(folder).failed
        study = create_study(StudySpec(name="Active", status="open", allocation="adaptive", budget_documents=5)).id
        results = analyse(study)
    assert results["sampling"]["allocation"] == "adaptive" and "not a uniform sample" in results["sampling"]["note"]
    auth.login("researcher")
    page = client.get(f"/results?study={study}").get_data(as_text=True)
    assert 'id="sampling-note"' in page and "Not a uniform sample" in page
    for path in ("/results/disagreements", "/results/agreement", "/results/correlation"):
        shown = client.get(f"{path}?study={study}")
        assert shown.status_code == 200 and 'id="sampling-note"' in shown.get_data(as_text=True), path
    records = [{"system": s, "document_id": 1, "question_id": q, "score": 3} for s in "ab" for q in (1, 2)]
    records.append({"system": "a", "document_id": 1, "question_id": 3, "score": 5})  # only one system scored q3
    assert {r["question_id"] for r in on_common_questions(records)} == {1, 2}


def _form(auth, **fields) -> dict:
    return {"csrf_token": auth.token(), "name": "From the form", "questions": "human_eval", "reference": ["human"], "policy": "hide",
            "scorers": "everyone", **fields}


def test_the_new_study_form_creates_an_adaptive_study_with_its_budget(app, client, auth, tmp_path):
    from app.extensions import db
    from app.models import Study

    folder = write_study_set(tmp_path / "data", documents=2, questions_each=3)
    with app.app_context():
        assert not import_path(folder).failed
    auth.login("researcher")
    form = client.get("/studies/new").get_data(as_text=True)
    assert 'name="allocation" value="adaptive"' in form and 'name="budget_documents"' in form
    response = client.post("/studies/new", data=_form(auth, allocation="adaptive", budget_documents="4", budget_answers="30",
                                                      min_per_answer="2", tie_margin="0.25", overlap=""))
    assert response.status_code == 302, response.get_data(as_text=True)
    with app.app_context():
        study = db.session.scalar(db.select(Study).where(Study.name == "From the form"))
        assert (study.allocation, study.budget_documents, study.budget_answers, study.min_per_answer,
                study.tie_margin, study.budget_hours) == ("adaptive", 4, 30, 2, 0.25, None)
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "0 of 4 documents read" in page


@pytest.mark.parametrize("fields, message", [
    ({"allocation": "adaptive"}, "needs a budget"),
    ({"allocation": "adaptive", "budget_documents": "ten"}, "Budget of documents read: &#39;ten&#39; is not a whole number"),
    ({"allocation": "adaptive", "budget_documents": "0"}, "must be at least 1"),
    ({"allocation": "adaptive", "budget_hours": "nan"}, "Budget of annotator-hours"),
    ({"allocation": "adaptive", "budget_documents": "3", "tie_margin": "-1"}, "tie margin must be a positive number"),
    ({"allocation": "adaptive", "budget_documents": "3", "overlap": "2"}, "leave the overlap out"),
    ({"allocation": "sideways"}, "Allocation must be one of"),
])
def test_the_new_study_form_refuses_a_bad_adaptive_budget_by_name(app, client, auth, tmp_path, fields, message):
    from app.extensions import db
    from app.models import Study

    folder = write_study_set(tmp_path / "data", documents=2, questions_each=3)
    with app.app_context():
        assert not import_path(folder).failed
    auth.login("researcher")
    response = client.post("/studies/new", data=_form(auth, **fields))
    assert response.status_code == 400
    assert message in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalar(db.select(Study).where(Study.name == "From the form")) is None
