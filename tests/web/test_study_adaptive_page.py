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
