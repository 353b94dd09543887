"""The study page of an adaptive study shows the ranking's pairs and the budget spent; a fixed one does not."""
from __future__ import annotations

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
    records = [{"system": s, "document_id": 1, "question_id": q, "score": 3} for s in "ab" for q in (1, 2)]
    records.append({"system": "a", "document_id": 1, "question_id": 3, "score": 5})  # only one system scored q3
    assert {r["question_id"] for r in on_common_questions(records)} == {1, 2}
