"""Cached analyses follow only what can change them (issue 38): bookkeeping never invalidates, a save only its study's.

The oracle is the analysis itself, counted: load_current_scores runs once per computation of a
study's analysis, so a page served from the cache does not call it. Correctness is checked the other
way too: after a save in a study, that study's page shows the new score count.
"""
from __future__ import annotations

import pytest
from sqlalchemy import select, update

from app.extensions import db
from app.models import ApiToken, MetricResult, Study, System, User
from app.services import cache
from app.services.api_tokens import authenticate_token, create_token
from app.services.results import assemble
from app.services.studies.setup import StudySpec, create_study
from tests.conftest import PASSWORDS, AuthActions
from tests.support.scoring_helpers import ANSWERS_RE, post_score


@pytest.fixture
def computed(monkeypatch):
    """The study ids whose scores an analysis loaded (one entry per computation, none for a cache hit)."""
    loads = []
    real = assemble.load_current_scores

    def counting(study_id, *args, **kwargs):
        loads.append(study_id)
        return real(study_id, *args, **kwargs)

    monkeypatch.setattr(assemble, "load_current_scores", counting)
    return loads


@pytest.fixture
def two_studies(demo):
    """The demo's study and a second open one over the same answers: (first id, second id)."""
    with demo.app_context():
        first = db.session.scalars(select(Study)).one().id
        second = create_study(StudySpec(name="Second look", question_ids=None, status="open", is_demo=True,
                                        system_ids=list(db.session.scalars(select(System.id))))).id
    return first, second


def _signed_in(app, role: str):
    client = app.test_client()
    auth = AuthActions(client)
    assert auth.login(role, PASSWORDS[role]).status_code == 302
    return client, auth


def _save_one(app, study_id: int, value: int) -> None:
    """The annotator saves one score in the study through the question page's endpoint."""
    client, auth = _signed_in(app, "annotator")
    page = client.get(f"/annotate/{study_id}/").headers["Location"]
    question = int(page.rstrip("/").rsplit("/", 1)[1])
    label, sha = ANSWERS_RE.findall(client.get(f"/annotate/{study_id}/q/{question}").get_data(as_text=True))[0]
    response = post_score(client, auth.token(), study=study_id, question_id=question, label=label, value=value,
                          answer=sha)
    assert response.status_code == 200, response.get_data(as_text=True)


def test_a_save_in_one_study_leaves_the_other_studys_analysis_cached(two_studies, demo, computed):
    first, second = two_studies
    staff, _ = _signed_in(demo, "researcher")
    for study in (first, second):
        assert staff.get(f"/results?study={study}").status_code == 200
    assert sorted(computed) == [first, second]
    computed.clear()
    _save_one(demo, first, 4)
    page = staff.get(f"/results?study={second}")
    assert page.status_code == 200 and computed == [], "a save in another study recomputed this one"
    page = staff.get(f"/results?study={first}").get_data(as_text=True)
    assert computed == [first], "the study with the new score is computed again"
    assert "(1 scores from 1 annotators" in page or "1 score" in page


def _forget_last_use() -> None:
    """As if the token had been idle for a minute: outside the app's session, so no counter moves."""
    with db.engine.begin() as connection:
        connection.execute(update(ApiToken).values(last_used_at=None))


def test_a_sign_in_and_a_tokens_first_use_change_no_analysis(two_studies, demo, computed):
    first, _ = two_studies
    with demo.app_context():
        researcher = db.session.scalar(select(User).where(User.username == "researcher"))
        secret = create_token(researcher, scope="read", name="lab script").secret
    staff, _ = _signed_in(demo, "researcher")
    assert staff.get(f"/results/agreement?study={first}").status_code == 200
    with demo.app_context():
        fingerprint = cache.data_fingerprint()
    computed.clear()
    _signed_in(demo, "admin")  # writes the admin's last sign-in time
    with demo.app_context():
        assert db.session.scalar(select(User.last_login_at).where(User.username == "admin")) is not None
        assert cache.data_fingerprint() == fingerprint
        _forget_last_use()  # idle for long: the next use is written
        fingerprint = cache.data_fingerprint()
        assert authenticate_token(secret) is not None
        assert db.session.scalar(select(ApiToken.last_used_at)) is not None, "the use was recorded"
        assert cache.data_fingerprint() == fingerprint
        _forget_last_use()
    api = demo.test_client()
    assert api.get("/api/v1/studies", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    assert staff.get(f"/results/agreement?study={first}").status_code == 200
    assert computed == [], "bookkeeping emptied the analysis cache"


def test_an_account_change_beside_its_sign_in_time_still_counts(demo):
    """Only bookkeeping columns are quiet: deactivating an annotator changes what the exports say."""
    with demo.app_context():
        fingerprint = cache.data_fingerprint()
        user = db.session.scalar(select(User).where(User.username == "annotator"))
        user.last_login_at = None
        user.active = False
        db.session.commit()
        assert cache.data_fingerprint() != fingerprint


def test_the_cache_keeps_one_value_per_key_and_at_most_max_entries(app, monkeypatch):
    monkeypatch.setattr(cache, "MAX_ENTRIES", 3)
    cache.clear()
    with app.app_context():
        assert cache.cached("k", lambda: 1) == 1
        db.session.execute(update(User).where(User.username == "annotator").values(role="annotator"))
        db.session.commit()  # a write: the next value is computed on new data and replaces the old one
        assert cache.cached("k", lambda: 2) == 2
        assert cache.size() == 1
        for key in range(5):
            cache.cached(("other", key), lambda: key)
        assert cache.size() == 3
    cache.clear()


def test_a_save_keeps_what_reads_no_score_and_recomputes_what_does(two_studies, demo, monkeypatch):
    """The metric columns and per-answer metric values read no human score: a save leaves them cached."""
    first, _ = two_studies
    columns, values = [], []
    real_columns, real_values = assemble.metric_columns, assemble.item_values
    monkeypatch.setattr(assemble, "metric_columns", lambda *a, **k: columns.append(a) or real_columns(*a, **k))
    monkeypatch.setattr(assemble, "item_values", lambda *a, **k: values.append(a) or real_values(*a, **k))
    _save_one(demo, first, 4)  # the annotator's first visit makes their round (a change of the study's rows)
    staff, _ = _signed_in(demo, "researcher")
    for page in ("correlation", "disagreements"):
        assert staff.get(f"/results/{page}?study={first}").status_code == 200
    before = (len(columns), len(values))
    assert all(before)
    _save_one(demo, first, 2)
    for page in ("correlation", "disagreements"):
        assert staff.get(f"/results/{page}?study={first}").status_code == 200
    assert (len(columns), len(values)) == before
    with demo.app_context():  # a metric value changes: both are read again
        db.session.execute(update(MetricResult).values(value=MetricResult.value + 1))
        db.session.commit()
    assert staff.get(f"/results/disagreements?study={first}").status_code == 200
    assert len(columns) > before[0] and len(values) > before[1]
