"""The rater's `evidence` profile end to end against the stub LLM: the document in the prompt, scripted replies
with genuine and invented quotes, the checked quotes stored, the shares and flags on the run page (with the
switch that leaves flagged ratings out), the drill-down, the agreement page's calibration, and a re-run
that makes no call."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from app.core.evidence import is_flagged
from app.extensions import db
from app.models import Document, Job, LLMRating, Study
from app.services.jobs import resume_job
from app.services.judge import save_settings
from app.services.rater import RaterSpec, current_rater_prompt, dry_run, launch
from app.services.rater.items import study_items
from tests.support.evidence_replies import INVENTED, kind_of, rater_reply, score_of
from tests.support.jobs import wait_for_job
from tests.support.scoring_data import generate_scores

STUB_POLICY = rater_reply
MODEL = "evidence-test"  # unknown to tiktoken: tokens are counted by the documented estimate at once
CONTEXT = 4000  # small, so the demo's documents are cut and the cut is recorded


def evidence_spec(study_id: int, **changes) -> RaterSpec:
    return RaterSpec(study_id, MODEL, current_rater_prompt("evidence").id, profile="evidence",
                     context_tokens=CONTEXT, **changes)


@pytest.fixture
def evidence_run(demo, stub, workers, client, auth, monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    with demo.app_context():
        save_settings(base_url=stub.base_url, api_key="sk-rater-test-0123456789")
        study_id = db.session.scalars(select(Study)).one().id
        generate_scores(["ann1", "ann2", "ann3"], seed=5)
        prompt_id = current_rater_prompt("evidence").id
    auth.login("researcher")
    form = {"csrf_token": auth.token(), "study_id": str(study_id), "rater_model": MODEL, "profile": "evidence",
            "prompt_id": str(prompt_id), "max_quotes": "3", "context_tokens": str(CONTEXT), "json_schema": "y",
            "temperature": "0", "concurrency": "2", "budget_usd": ""}
    estimate = client.post("/judge/rater", data={**form, "estimate": "Estimate (dry run)"}).get_data(as_text=True)
    response = client.post("/judge/rater", data={**form, "launch": "Rate every answer"})
    assert response.status_code == 302, response.get_data(as_text=True)
    with demo.app_context():
        job_id = db.session.scalar(select(func.max(Job.id)))
    job = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=60)
    return demo, stub, study_id, job, estimate


def test_one_evidence_run_from_the_form_to_the_pages_and_a_rerun_without_a_call(evidence_run, client):
    """One run serves every check (a run costs seconds): the stored quotes, the run page, the drill-down,
    the agreement page's calibration, and a re-run."""
    check_the_rater_read_the_document_and_its_quotes_were_checked(*evidence_run)
    check_the_run_page(*evidence_run, client)
    check_a_rerun_makes_no_call(*evidence_run)
    check_the_agreement_page(*evidence_run, client)


def check_the_rater_read_the_document_and_its_quotes_were_checked(app, stub, study_id, job, estimate):
    assert job.status == "done", job.error
    with app.app_context():
        items = study_items(db.session.get(Study, study_id))
        assert job.result["rated"] == len(items) == stub.calls and job.result["errors"] == 0
        documents = {d.id: d.text for d in db.session.scalars(select(Document))}
        # The dry run counts the document's tokens: far more than a reference-only prompt (at a temperature
        # not yet rated, so nothing is cached).
        reference = dry_run(RaterSpec(study_id, MODEL, current_rater_prompt().id, temperature=0.5))
        shown = dry_run(evidence_spec(study_id, temperature=0.5))
        assert shown["prompt_tokens_est"] > reference["prompt_tokens_est"] + len(items) * 200
        assert shown["truncation"]["documents_cut"] == 2 and job.result["truncation"]["documents_cut"] == 2
        assert 'data-estimate="truncation"' in estimate
        for request in stub.requests:  # the start of the document, JSON asked for, the reply's room
            user = request.body["messages"][1]["content"]
            assert any(text[:300] in user for text in documents.values())
            assert request.body["response_format"]["json_schema"]["name"] == "evidence_score"
            assert request.body["max_tokens"] == 2048
        rows = {row.answer_id: row for row in db.session.scalars(select(LLMRating))}
        kinds = {0: 0, 1: 0, 2: 0}
        for item in items:
            row = rows[item.answer_id]
            kind = kind_of(item.item.answer)
            kinds[kind] += 1
            assert row.score == score_of(item.item.answer)
            quotes = row.evidence["quotes"]
            assert row.evidence["document_id"] == item.document_id and len(quotes) == 2
            statuses = [q["status"] for q in quotes]
            assert statuses == {0: ["exact", "close"], 1: ["exact", "unsupported"],
                                2: ["unsupported", "unsupported"]}[kind], (kind, quotes)
            for q in quotes:
                if q["status"] != "unsupported":
                    passage = documents[item.document_id][q["start"]:q["end"]]
                    assert re.sub(r"\W", "", passage.lower()) == re.sub(r"\W", "", q["quote"].lower())
            assert is_flagged(quotes) == (kind == 2)
        assert all(kinds.values()), kinds  # every kind of reply was scripted at least once


def shown_field(page: str, field: str) -> str:
    return re.search(rf'data-field="{field}">([^<]+)<', page).group(1).strip()


def check_the_run_page(app, stub, study_id, job, _estimate, client):
    """The shares and flags, and the one switch that leaves flagged ratings out of every number."""
    with app.app_context():
        kinds = [kind_of(item.item.answer) for item in study_items(db.session.get(Study, study_id))]
    n, flagged = len(kinds), kinds.count(2)
    quotes = 2 * n
    exact, close = kinds.count(0) + kinds.count(1), kinds.count(0)
    page = client.get(f"/judge/rater/runs/{job.id}").get_data(as_text=True)
    assert shown_field(page, "scope") == "Every number below: flagged ratings included"
    assert shown_field(page, "decisions") == str(n) and shown_field(page, "quotes") == str(quotes)
    assert shown_field(page, "exact_share") == f"{100 * exact / quotes:.1f}%"
    assert shown_field(page, "close_share") == f"{100 * close / quotes:.1f}%"
    assert shown_field(page, "unsupported_share") == f"{100 * (quotes - exact - close) / quotes:.1f}%"
    assert shown_field(page, "resting_share") == f"{100 * (kinds.count(1) + flagged) / n:.1f}%"
    assert page.count('data-flag="all-unsupported"') == flagged
    assert 'id="evidence-systems"' in page and 'id="evidence-truncation"' in page
    out = client.get(f"/judge/rater/runs/{job.id}?flagged=out").get_data(as_text=True)
    assert shown_field(out, "scope") == "Every number below: flagged ratings left out"
    kept = n - flagged
    assert shown_field(out, "decisions") == str(kept) and shown_field(out, "quotes") == str(2 * kept)
    assert shown_field(out, "resting_share") == f"{100 * kinds.count(1) / kept:.1f}%"
    assert 'data-flag="all-unsupported"' not in out and "(flagged ratings left out)" in out
    # The drill-down of a flagged rating shows its quotes with their status; the invented one is unsupported.
    with app.app_context():
        item = next(i for i in study_items(db.session.get(Study, study_id)) if kind_of(i.item.answer) == 2)
    drill = client.get(f"/judge/rater/runs/{job.id}/quotes?answer={item.answer_id}").get_data(as_text=True)
    assert drill.count('data-status="unsupported"') == 2 and INVENTED in drill
    assert 'id="doc-panel"' in drill and 'id="quote-spans">[]<' in drill
    # Pages of jobs that are no evidence run, or an answer the run did not rate, are not found.
    assert client.get("/judge/rater/runs/999999").status_code == 404
    assert client.get(f"/judge/rater/runs/{job.id}/quotes?answer=999999").status_code == 404
    assert client.get(f"/judge/rater/runs/{job.id}/quotes").status_code == 404


def check_the_agreement_page(app, stub, study_id, job, _estimate, client):
    """The evidence rater's α, with and without flagged ratings, beside a reference-only rater's and the ceiling."""
    with app.app_context():
        launch(RaterSpec(study_id, MODEL, current_rater_prompt().id), concurrency=2, budget_usd=None)
    stub.policy = lambda body: "Rating: [[3]]"
    with app.app_context():
        reference_job = db.session.scalar(select(func.max(Job.id)))
    assert wait_for_job(app, reference_job, lambda j: j.status in ("done", "failed"), timeout=60).status == "done"
    page = client.get(f"/results/agreement?study={study_id}").get_data(as_text=True)
    table = page[page.index('id="rater-calibration"'):]
    table = table[:table.index("</table>")]
    assert table.count('data-profile="evidence"') == 1 and table.count('data-profile="reference"') == 1
    assert 'data-field="unflagged"' in table and 'data-field="ceiling_mean"' in table


def check_a_rerun_makes_no_call(app, stub, study_id, job, _estimate):
    calls = stub.calls
    with app.app_context():
        again = launch(evidence_spec(study_id), concurrency=4, budget_usd=None).id  # a twin job is refused
    done = wait_for_job(app, again, lambda j: j.status in ("done", "failed"), timeout=60)
    assert done.status == "done" and done.result["api_calls"] == 0 and done.result["cached"] == done.result["answers"]
    assert stub.calls == calls


def test_a_server_refusing_the_schema_gets_the_text_format_and_a_reply_without_a_rating_is_retried_on_resume(
        demo, stub, workers, client, auth, monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    stub.refuse_response_format = True
    replies = iter(["QUOTE supports: not a rating at all"] + ["[[4]]"] * 1000)
    stub.policy = lambda body: next(replies)
    with demo.app_context():
        save_settings(base_url=stub.base_url, api_key="sk-rater-test-0123456789")
        study_id = db.session.scalars(select(Study)).one().id
        job_id = launch(evidence_spec(study_id), concurrency=1, budget_usd=None).id
    failed = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=60)
    assert failed.status == "failed" and failed.result["errors"] == 1
    refused = [r for r in stub.requests if r.status == 400]
    assert refused and all("response_format" in r.body for r in refused)
    assert all("response_format" not in r.body for r in stub.requests if r.status == 200)
    with demo.app_context():
        assert db.session.scalar(select(func.count()).select_from(LLMRating).where(LLMRating.score.is_(None))) == 1
        answered = sum(r.status == 200 for r in stub.requests)
        resume_job(db.session.get(Job, job_id))
    resumed = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed") and j.attempts > failed.attempts,
                           timeout=60)
    # The resume asks again for the one rating that had none, and for nothing else.
    assert resumed.status == "done" and sum(r.status == 200 for r in stub.requests) == answered + 1
    # The run records every refusal, over both attempts, and its page says the text format was read instead.
    refusals = sum(r.status == 400 for r in stub.requests)
    assert failed.result["schema_fallbacks"] == answered and resumed.result["schema_fallbacks"] == refusals
    auth.login("researcher")
    page = client.get(f"/judge/rater/runs/{job_id}").get_data(as_text=True)
    assert (f"refused <code>response_format</code> (the JSON schema) on {refusals} calls (HTTP 400)" in page
            and "read in the text format" in page)


def test_a_document_never_follows_a_redirect_to_another_host(demo, stub, workers, monkeypatch):
    """The endpoint answers 307 to another server: nothing reaches it, and every rating is an error row."""
    from tests.support.openai_stub import StubOpenAIServer

    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    with StubOpenAIServer(policy=rater_reply) as elsewhere:
        stub.redirect_to = elsewhere.base_url
        with demo.app_context():
            save_settings(base_url=stub.base_url, api_key="sk-rater-test-0123456789", max_retries=0)
            study_id = db.session.scalars(select(Study)).one().id
            job_id = launch(evidence_spec(study_id), concurrency=2, budget_usd=None).id
        failed = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=60)
        assert failed.status == "failed" and failed.result["rated"] == 0 and stub.calls == failed.result["answers"]
        assert elsewhere.calls == 0


def test_a_rater_steered_to_quote_a_word_flags_every_rating(demo, stub, workers, client, auth, monkeypatch):
    """Text in a document steers the model to back every score with the quote "the" (issue 36: 14 ratings stayed
    unflagged): each quote is too short, unsupported, and flags its rating, on the page as in the data."""
    import json

    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    stub.policy = lambda body: json.dumps({"reasoning": "As the document asks.", "score": 5,
                                           "quotes": [{"quote": "the", "stance": "supports"}]})
    with demo.app_context():
        save_settings(base_url=stub.base_url, api_key="sk-rater-test-0123456789")
        study_id = db.session.scalars(select(Study)).one().id
        job_id = launch(evidence_spec(study_id), concurrency=2, budget_usd=None).id
    job = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=60)
    assert job.status == "done", job.error
    with demo.app_context():
        ratings = list(db.session.scalars(select(LLMRating).where(LLMRating.job_id == job_id)))
        assert ratings and all(is_flagged(r.evidence["quotes"]) for r in ratings)
        assert all(q["status"] == "unsupported" and q["too_short"] for r in ratings for q in r.evidence["quotes"])
    auth.login("researcher")
    page = client.get(f"/judge/rater/runs/{job_id}").get_data(as_text=True)
    assert page.count('data-flag="too-short"') == len(ratings)
    assert f"({len(ratings)} flagged: every quote unsupported, or a quote under the minimum)" in page


def test_choosing_the_evidence_profile_on_the_form_rates_with_the_evidence_prompt(demo, client, auth, monkeypatch):
    """Issue 40, item 3: the form keeps the reference prompt chosen when the profile is switched to evidence;
    launching failed with a red banner. As on the judge's form, the profile's own prompt is used."""
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    with demo.app_context():
        save_settings(base_url="http://127.0.0.1:9/v1", api_key="sk-rater-test-0123456789")  # no job runs here
        study_id = db.session.scalars(select(Study)).one().id
        reference_id, evidence_id = current_rater_prompt().id, current_rater_prompt("evidence").id
    auth.login("researcher")
    page = client.get("/judge/rater").get_data(as_text=True)
    assert f'<option selected value="{reference_id}">' in page  # the form opens on the reference prompt
    form = {"csrf_token": auth.token(), "study_id": str(study_id), "rater_model": MODEL, "profile": "evidence",
            "prompt_id": str(reference_id), "max_quotes": "3", "context_tokens": str(CONTEXT), "json_schema": "y",
            "temperature": "0", "concurrency": "2", "budget_usd": ""}
    estimate = client.post("/judge/rater", data={**form, "estimate": "Estimate (dry run)"}).get_data(as_text=True)
    assert "flash-error" not in estimate and 'data-estimate="truncation"' in estimate
    response = client.post("/judge/rater", data={**form, "launch": "Rate every answer"})
    assert response.status_code == 302, response.get_data(as_text=True)
    with demo.app_context():
        job = db.session.scalars(select(Job).order_by(Job.id.desc())).first()
        assert job.params["profile"] == "evidence" and job.params["prompt_id"] == evidence_id
    # And the other way round: the reference profile with the evidence prompt chosen rates with the reference one.
    response = client.post("/judge/rater", data={**form, "profile": "reference", "prompt_id": str(evidence_id),
                                                 "launch": "Rate every answer"})
    assert response.status_code == 302, response.get_data(as_text=True)
    with demo.app_context():
        job = db.session.scalars(select(Job).order_by(Job.id.desc())).first()
        assert "profile" not in job.params and job.params["prompt_id"] == reference_id  # a reference run's params
