"""The pointwise LLM rater: prompt, score rule, job through the stub, storage apart from humans, agreement."""
from __future__ import annotations

import hashlib
import re

import krippendorff
import numpy as np
import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Document, LLMRating, Score, Study
from app.core.rater import DEFAULT_RATER_TEMPLATE, RaterTemplate, RatingItem, parse_score, render, validate_template
from app.core.rubric import RUBRIC
from app.services.jobs import DuplicateJob
from app.services.judge import save_settings
from app.services.rater import RaterRunError, RaterSpec, current_rater_prompt, dry_run, launch
from app.services.rater.items import study_items
from app.services.rater.reports import all_study_ratings
from app.services.results import analyse, rater_agreement
from app.core.stats.rater_agreement import rater_agreement as agreement_core
from tests.support.jobs import wait_for_job
from tests.support.scoring_data import generate_scores

_ANSWER = re.compile(r"## The assistant's answer\n(.*)\n\n## End of the answer", re.S)


def answer_in(body) -> str:
    return _ANSWER.search(body["messages"][-1]["content"]).group(1)


def hashed_rating(answer: str) -> int:
    return 1 + hashlib.sha256(answer.encode()).digest()[0] % 5


def rating_policy(body) -> str:
    """A stand-in rater: a fixed rating per answer text, after a decoy token it must not take."""
    return f"A [[1]] would be too harsh. Rating: [[{hashed_rating(answer_in(body))}]]"


STUB_POLICY = rating_policy


# --- the core -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("reply", "score"), [
    ("Rating: [[4]]", 4), ("[[ 5 ]]", 5), ("First [[2]], on reflection [[3]]", 3), ("[[6]]", None),
    ("Rating: 4", None), ("", None), ("[[0]] then [[1]]", 1),
])
def test_the_rating_is_the_last_token_from_1_to_5(reply, score):
    assert parse_score(reply) == score


def test_the_prompt_carries_question_references_rubric_and_answer_never_a_document():
    item = RatingItem(7, "What was decided?", (("Human reference", "They merged."),), "The boards {answer} merged.")
    system, user = render(DEFAULT_RATER_TEMPLATE, item, RUBRIC)
    assert system["role"] == "system" and "5 (Excellent)" in system["content"] and "[[N]]" in system["content"]
    assert "What was decided?" in user["content"] and "[Human reference]\nThey merged." in user["content"]
    assert "The boards {answer} merged." in user["content"]  # placeholders inside an answer stay as written
    validate_template(DEFAULT_RATER_TEMPLATE)
    for broken in (RaterTemplate("x", 1, "{rubric} [[N]]", "{question} {answer}"),
                   RaterTemplate("x", 1, "Rate [[N]]", "{question} {references} {answer}"),
                   RaterTemplate("x", 1, "{rubric}", "{question} {references} {answer}")):
        with pytest.raises(ValueError):
            validate_template(broken)


# --- agreement statistics against krippendorff directly ---------------------------------------------

def _alpha(a, b):
    return krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement="ordinal",
                              value_domain=[1, 2, 3, 4, 5])


def test_agreement_equals_krippendorff_pair_by_pair():
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, 120)
    humans = {name: np.clip(truth + rng.integers(-1, 2, 120), 1, 5).astype(float) for name in ("ann", "bob", "cy")}
    humans["cy"][rng.random(120) < 0.2] = np.nan  # missing scores
    llm = np.clip(truth + rng.integers(-1, 2, 120), 1, 5)
    records = [{"annotator": name, "system": f"s{i % 4}", "document_id": "d", "question_id": str(i), "score": int(v)}
               for name, row in humans.items() for i, v in enumerate(row) if np.isfinite(v)]
    result = agreement_core(records, {(f"s{i % 4}", "d", str(i)): int(v) for i, v in enumerate(llm)})
    order = sorted(humans)
    items = sorted({(f"s{i % 4}", "d", str(i)) for i in range(120)})
    position = {key: int(key[2]) for key in items}
    llm_row = np.array([llm[position[k]] for k in items], float)
    rows = {name: np.array([humans[name][position[k]] for k in items]) for name in order}
    for name in order:
        assert result.llm_by_annotator[name] == pytest.approx(_alpha(llm_row, rows[name]))
        others = [_alpha(rows[name], rows[o]) for o in order if o != name]
        assert result.ceiling[name] == pytest.approx(np.mean(others))
    assert result.llm_alpha == pytest.approx(np.mean([_alpha(llm_row, rows[n]) for n in order]))
    assert result.ceiling_min == min(result.ceiling.values()) and result.n_items == 120
    assert result.within_human_range is True  # planted: the LLM is as noisy as an annotator


def test_a_random_rater_falls_below_human_agreement():
    rng = np.random.default_rng(1)
    truth = rng.integers(1, 6, 150)
    records = [{"annotator": name, "system": "s", "document_id": "d", "question_id": str(i),
                "score": int(np.clip(truth[i] + rng.integers(-1, 2), 1, 5))} for name in ("a", "b", "c")
               for i in range(150)]
    result = agreement_core(records, {("s", "d", str(i)): int(v) for i, v in enumerate(rng.integers(1, 6, 150))})
    assert result.within_human_range is False and abs(result.llm_alpha) < 0.2 < result.ceiling_min


# --- a job on a study, through the stub -----------------------------------------------------------

@pytest.fixture
def rated_demo(demo, stub, workers):
    with demo.app_context():
        save_settings(base_url=stub.base_url, api_key="sk-rater-test-0123456789")
        study = db.session.scalars(select(Study)).one()
        study_id = study.id
        generate_scores(["ann1", "ann2", "ann3"], seed=3)
        humans_before = db.session.scalar(select(func.count()).select_from(Score))
        spec = RaterSpec(study_id, "gpt-4", current_rater_prompt().id)
        estimate = dry_run(spec)
        job_id = launch(spec, concurrency=4, budget_usd=None).id
    job = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=60)
    return demo, stub, study_id, spec, job, humans_before, estimate


def test_a_rater_job_rates_every_shown_answer_apart_from_the_humans(rated_demo):
    app, stub, study_id, spec, job, humans_before, estimate = rated_demo
    assert job.status == "done", job.error
    with app.app_context():
        study = db.session.get(Study, study_id)
        items = study_items(study)
        assert estimate["answers"] == len(items) and estimate["calls"] == len(items)
        assert job.result["rated"] == len(items) == stub.calls
        assert db.session.scalar(select(func.count()).select_from(LLMRating)) == len(items)
        assert db.session.scalar(select(func.count()).select_from(Score)) == humans_before  # never a human score
        [ratings] = all_study_ratings(study_id)
        assert ratings.scores == {item.key: hashed_rating(item.item.answer) for item in items}
        documents = list(db.session.scalars(select(Document.text)))
        for request in stub.requests:
            sent = request.body["messages"][0]["content"] + request.body["messages"][1]["content"]
            assert not any(doc[:200] in sent for doc in documents if len(doc) > 200)  # never the document
        # Ranked like any metric on the correlation page; never among the human summaries.
        data = analyse(study_id, "all")
        column = next(c for c in data["metric_columns"] if c["source"] == "rater")
        assert column["values"] == pytest.approx(ratings.system_means())
        assert any(row["metric"] == column["label"] for row in data["correlations"])
        assert all(row["system"] != column["label"] for row in data["systems"])
        # A second run with other settings on the same content makes no call.
        again = launch(spec, concurrency=2, budget_usd=None).id
        with pytest.raises(DuplicateJob):
            launch(spec, concurrency=2, budget_usd=None)
    job2 = wait_for_job(app, again, lambda j: j.status in ("done", "failed"), timeout=60)
    assert job2.status == "done" and job2.result["api_calls"] == 0 and stub.calls == len(items)


def test_the_judges_budget_stops_a_rater_job_cleanly_and_a_larger_budget_finishes(demo, stub, workers):
    import json

    stub.usage = (100, 50)
    with demo.app_context():
        save_settings(base_url=stub.base_url, api_key="sk-rater-test-0123456789",
                      prices_json=json.dumps({"rater-test": [2000, 1000]}))  # 0.25 USD per call, the judge's table
        study_id = db.session.scalars(select(Study)).one().id
        spec = RaterSpec(study_id, "rater-test", current_rater_prompt().id)
        total = len(study_items(db.session.get(Study, study_id)))
        with pytest.raises(RaterRunError, match="no price"):
            launch(RaterSpec(study_id, "unpriced-model", spec.prompt_id), concurrency=1, budget_usd=1.0)
        job_id = launch(spec, concurrency=1, budget_usd=0.75).id
    stopped = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=60)
    assert stopped.status == "done" and stopped.result["stopped"] == "budget"
    assert stopped.result["api_calls"] == 3 == stub.calls and stopped.result["cost_usd"] == pytest.approx(0.75)
    assert stopped.result["rated"] == 3 and stopped.result["skipped"] == total - 3
    with demo.app_context():
        assert db.session.scalar(select(func.count()).select_from(LLMRating)) == 3
        again = launch(spec, concurrency=8, budget_usd=100.0).id
    finished = wait_for_job(demo, again, lambda j: j.status in ("done", "failed"), timeout=60)
    assert finished.status == "done" and finished.result["stopped"] is None
    assert (finished.result["api_calls"], finished.result["cached"]) == (total - 3, 3) and stub.calls == total


def test_the_rater_sees_only_the_references_the_study_shows_its_annotators(demo):
    from app.models import Reference
    from app.services.studies.setup import set_references

    with demo.app_context():
        study = db.session.scalars(select(Study)).one()
        # "hide": where a shown answer repeats the reference, annotators do not see it on that question.
        detection = set_references(study, ["human"], "hide")
        db.session.commit()
        hidden_on = {m.question_id for m in detection.matches}
        assert hidden_on
        items = study_items(study)
        assert items and {int(i.key[2]) for i in items} > hidden_on
        for i in items:
            expected = [] if int(i.key[2]) in hidden_on else ["Human reference"]
            assert [label for label, _ in i.item.references] == expected
        others = {text for text in db.session.scalars(select(Reference.text).where(Reference.kind != "human"))
                  if len(text) > 40}
        for item in items:
            sent = "".join(m["content"] for m in render(DEFAULT_RATER_TEMPLATE, item.item, RUBRIC))
            assert not [text for text in others if text in sent]


def test_the_agreement_page_compares_the_rater_with_the_annotators(rated_demo, client, auth):
    app, _stub, study_id, _spec, _job, _humans, _estimate = rated_demo
    with app.app_context():
        [expected] = rater_agreement(study_id, "all")
    auth.login("researcher")
    page = client.get(f"/results/agreement?study={study_id}").get_data(as_text=True)
    assert 'id="llm-rater"' in page and "LLM rater gpt-4 (prompt v1)" in page
    shown = re.search(r'data-field="llm_alpha">([^<]+)<', page).group(1)
    assert shown == f"{expected['llm_alpha']:.3f}"
    assert page.count('data-annotator="ann') == 3
    correlation = client.get(f"/results/correlation?study={study_id}").get_data(as_text=True)
    assert "LLM rater gpt-4 (prompt v1)" in correlation


def test_rater_prompts_are_versioned(demo, client, auth):
    auth.login("researcher")
    page = client.get("/judge/rater").get_data(as_text=True)
    assert "studio-rater" in page and "Rate every answer" in page
    with demo.app_context():
        base = current_rater_prompt()
        system, user = base.system_text, base.user_template
        base_id = base.id
    token = auth.token()
    response = client.post(f"/judge/rater/prompts/{base_id}", data={"csrf_token": token,
                                                                     "system_text": system + " Be strict.",
                                                                     "user_template": user})
    assert response.status_code == 302
    with demo.app_context():
        assert current_rater_prompt().version == 2 and current_rater_prompt().system_text.endswith("Be strict.")
    bad = client.post(f"/judge/rater/prompts/{base_id}", data={"csrf_token": token, "system_text": system,
                                                               "user_template": "{question} {answer}"})
    assert "{references}" in bad.get_data(as_text=True)


@pytest.mark.parametrize("value, message", [
    ("gpt\x00-4", "Rater model contains a NUL character (\\u0000)"),
    ("m" * 121, "Rater model is 121 characters long; at most 120 are allowed."),
])
def test_the_rater_form_refuses_a_model_name_the_database_cannot_store(demo, client, auth, value, message):
    from app.models import Job

    auth.login("researcher")
    with demo.app_context():
        study_id = db.session.scalar(select(Study.id))
        prompt_id = current_rater_prompt().id
    response = client.post("/judge/rater", data={
        "csrf_token": auth.token(), "study_id": str(study_id), "rater_model": value, "prompt_id": str(prompt_id),
        "temperature": "0", "concurrency": "2", "budget_usd": "", "launch": "Rate every answer"})
    assert response.status_code == 200 and message in response.get_data(as_text=True)
    with demo.app_context():
        assert db.session.scalar(select(func.count(Job.id))) == 0


def test_a_rater_prompt_edit_with_a_nul_character_is_refused_and_no_version_is_saved(demo, client, auth):
    auth.login("researcher")
    with demo.app_context():
        base = current_rater_prompt()
        system, user, base_id = base.system_text, base.user_template, base.id
    page = client.post(f"/judge/rater/prompts/{base_id}", data={
        "csrf_token": auth.token(), "system_text": system, "user_template": user + "\x00"}).get_data(as_text=True)
    assert "User message template contains a NUL character (\\u0000)" in page
    with demo.app_context():
        assert current_rater_prompt().version == 1
