"""The Agreement page: no verdict on the LLM rater below the stated minimum of annotators and answers,
and the note on undefined α only when some α is undefined."""
from __future__ import annotations

import re

from sqlalchemy import select, update

from app.extensions import db
from app.models import Score, Study
from app.services.judge import save_settings
from app.services.rater import RaterSpec, current_rater_prompt, launch
from app.services.results import analyse
from tests.support.jobs import wait_for_job
from tests.support.scoring_data import generate_scores

UNDEFINED_NOTE = 'id="undefined-alpha-note"'


def STUB_POLICY(body) -> str:
    """A stand-in rater that rates every answer 1: far from the annotators, so α is low or negative."""
    return "Rating: [[1]]"


def _verdict(page: str) -> str:
    return re.sub(r"<[^>]+>", "", re.search(r'data-field="within">(.*?)</dd>', page, re.DOTALL).group(1)).strip()


def test_two_annotators_get_no_verdict_but_the_reason(demo, stub, workers, client, auth):
    with demo.app_context():
        save_settings(base_url=stub.base_url, api_key="sk-rater-test-0123456789")
        study_id = db.session.scalars(select(Study)).one().id
        generate_scores(["ann1", "ann2"], seed=3)
        job_id = launch(RaterSpec(study_id, "gpt-4", current_rater_prompt().id), concurrency=4, budget_usd=None).id
    job = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=60)
    assert job.status == "done", job.error
    auth.login("researcher")
    page = client.get(f"/results/agreement?study={study_id}").get_data(as_text=True)
    verdict = _verdict(page)
    assert verdict.startswith("the human ceiling cannot be estimated: 2 annotators (needs at least 3)"), verdict
    assert "within human agreement" not in verdict and "below human agreement" not in verdict
    # No "range" of one pair of annotators either (two leave-one-out α of the same pair: sd 0).
    assert re.search(r'data-field="ceiling_range"><span class="muted">not estimated</span></dd>', page)
    assert "at least 3 annotators and 30 answers scored by two or more of them" in page


def test_the_undefined_alpha_note_shows_only_when_some_alpha_is_undefined(demo, client, auth):
    with demo.app_context():
        study_id = db.session.scalars(select(Study)).one().id
        generate_scores(["ann1", "ann2", "ann3"], seed=4)
        assert all(row["alpha"] is not None for row in analyse(study_id, "all")["agreement"]["alpha"])
    auth.login("researcher")
    page = client.get(f"/results/agreement?study={study_id}").get_data(as_text=True)
    assert UNDEFINED_NOTE not in page and "α = 1 is perfect agreement" in page
    with demo.app_context():
        db.session.execute(update(Score).values(value=3))  # no variation: α is undefined everywhere
        db.session.commit()
    page = client.get(f"/results/agreement?study={study_id}").get_data(as_text=True)
    assert UNDEFINED_NOTE in page and "α is undefined when every score is the same" in page


def test_alpha_from_two_answers_is_given_with_a_warning(demo, client, auth):
    """Issue 40, item 5: per-system agreement showed α = 1.000 from 2 answers with no warning."""
    from app.models import AnnotationRound, Score, User
    from app.services.accounts import create_user
    from app.services.studies.lookup import require_study
    from tests.support.scoring_data import generate_scores, included_answers

    with demo.app_context():
        for name in ("ann1", "ann2"):
            create_user(name, "annotate-pass-1", "annotator")
        generate_scores(["ann1"], seed=4)
        study_id = require_study().id
        answers = [a for a in included_answers(study_id) if a[1] == "terse-13b"][:2]
        ann1, ann2 = (db.session.scalar(select(User.id).where(User.username == n)) for n in ("ann1", "ann2"))
        second = AnnotationRound(study_id=study_id, annotator_id=ann2, number=1)
        db.session.add(second)
        db.session.flush()
        for (answer_id, _, _, sha), value in zip(answers, (2, 4)):
            db.session.scalars(select(Score).where(Score.answer_id == answer_id, Score.annotator_id == ann1)).one() \
                .value = value
            db.session.add(Score(round_id=second.id, annotator_id=ann2, answer_id=answer_id, answer_sha256=sha,
                                 value=value))
        db.session.commit()
    auth.login("researcher")
    page = client.get(f"/results/agreement?study={study_id}").get_data(as_text=True)
    table = page.split('id="alpha"')[1].split("</table>")[0]
    row = next(r for r in table.split("<tr") if "terse-13b" in r)
    assert ">1.000<" in row
    assert "only 2 answers scored by two or more annotators (fewer than 10): α is unreliable" in row
    other = next(r for r in table.split("<tr") if "verbose-7b" in r)
    assert "alpha-warning" not in other  # no answer of it scored twice: undefined, with its reason instead
    data = client.get(f"/results/export/results.json?study={study_id}").get_json()
    rows = {r["scope"]: r for r in data["views"]["all"]["agreement"]["alpha"]}
    assert rows["terse-13b"]["warning"].startswith("only 2 answers")
