"""Work an analysis shares is done once (issue 38): the results JSON's two views when every annotator finished,
each view's item means across a dozen measures, and the study page's counts until the study's data change.

The oracle is the computation counted (build_results, item_means, the study page's counts) and what the
pages say, compared with the same figures computed without the reuse.
"""
from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from app.core.stats import analyses, human
from app.extensions import db
from app.models import QuestionView, Study, StudyQuestion
from app.models.base import as_utc
from app.services import cache, demo
from app.services.annotation import oversight
from app.services.results import assemble, full_results
from tests.conftest import PASSWORDS, AuthActions
from tests.support.scoring_data import generate_metric_results, generate_scores
from tests.support.scoring_helpers import ANSWERS_RE, post_score


@pytest.fixture
def counting(monkeypatch):
    """Count calls of a function where a module looks it up: counting(module, name) -> list of calls."""
    def count(module, name):
        calls = []
        real = getattr(module, name)

        def counted(*args, **kwargs):
            calls.append(args)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
        return calls
    return count


def _demo_scored(app, *, unfinished: bool) -> int:
    with app.app_context():
        demo.load_demo()
        generate_scores(["ann1", "ann2"], seed=11)
        if unfinished:
            generate_scores(["ann3"], seed=12, coverage=0.6)
        generate_metric_results(seed=13)
        return db.session.scalar(select(Study.id))


def test_the_finished_view_is_the_all_view_computed_once_when_everyone_finished(app, counting):
    study_id = _demo_scored(app, unfinished=False)
    built = counting(analyses, "build_results")
    means = counting(human, "item_means")
    cache.clear()
    with app.app_context():
        results = full_results(study_id)
    assert len(built) == 1, "both views share the one analysis of the same scores"
    # One in the analysis, one for every measure's disagreements (there was one per measure and view).
    assert len(means) == 2
    assert results["views"]["finished"] == results["views"]["all"]
    assert any(results["views"]["all"]["profiles"]["official"]["disagreements"].values())


def test_with_an_unfinished_annotator_each_view_has_its_own_analysis(app, counting):
    study_id = _demo_scored(app, unfinished=True)
    built = counting(analyses, "build_results")
    means = counting(human, "item_means")
    cache.clear()
    with app.app_context():
        results = full_results(study_id)
        finished = assemble.current_scores(study_id).for_view("finished")
    assert len(built) == 2 and len(means) == 4
    all_view, finished_view = results["views"]["all"], results["views"]["finished"]
    assert json.dumps(all_view, sort_keys=True) != json.dumps(finished_view, sort_keys=True)
    assert sum(row["n_scores"] for row in finished_view["systems"]) == len(finished)


def _signed_in(app, role: str):
    client = app.test_client()
    auth = AuthActions(client)
    assert auth.login(role, PASSWORDS[role]).status_code == 302
    return client, auth


def _scored_cell(page: str, username: str) -> str:
    row = page.split(f'data-annotator="{username}"')[1].split("</tr>")[0]
    return row.split('data-field="scored">')[1].split("<")[0]


def test_the_study_page_counts_once_per_change_and_still_shows_the_latest_activity(app, counting):
    study_id = _demo_scored(app, unfinished=True)
    counted = counting(oversight, "_progress_rows")
    checked = counting(oversight, "detect")
    staff, _ = _signed_in(app, "researcher")
    first = staff.get(f"/studies/{study_id}").get_data(as_text=True)
    assert staff.get(f"/studies/{study_id}").get_data(as_text=True) == first
    assert len(counted) == 1 and len(checked) == 1
    annotator, auth = _signed_in(app, "annotator")
    first_question = int(annotator.get(f"/annotate/{study_id}/").headers["Location"].rstrip("/").rsplit("/", 1)[1])
    page = annotator.get(f"/annotate/{study_id}/q/{first_question}").get_data(as_text=True)
    label, sha = ANSWERS_RE.findall(page)[0]
    opened = staff.get(f"/studies/{study_id}").get_data(as_text=True)
    assert len(counted) == 2, "the annotator's first visit made their round: the counts changed"
    assert _scored_cell(opened, "annotator") == "0 of 40"
    other = next(q for q in _questions(app, study_id) if q != first_question)
    assert annotator.get(f"/annotate/{study_id}/q/{other}").status_code == 200  # a view, no save
    with app.test_request_context():
        study = db.session.get(Study, study_id)
        row = next(r for r in oversight.annotator_progress(study) if r.username == "annotator")
        latest = db.session.scalar(select(func.max(QuestionView.first_viewed_at)).where(
            QuestionView.round_id == row.round_id))
        assert len(counted) == 2, "a question view changes no count"
        assert as_utc(row.last_activity) == as_utc(latest), "the last activity is read fresh"
    assert post_score(annotator, auth.token(), study=study_id, question_id=first_question, label=label, value=3,
                      answer=sha).status_code == 200
    saved = staff.get(f"/studies/{study_id}").get_data(as_text=True)
    assert len(counted) == 3 and len(checked) == 3
    assert _scored_cell(saved, "annotator") == "1 of 40"


def _questions(app, study_id: int) -> list[int]:
    with app.app_context():
        return list(db.session.scalars(select(StudyQuestion.question_id).where(StudyQuestion.study_id == study_id)))
