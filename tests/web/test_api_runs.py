"""The API's judge, rater and generation runs: the launch forms' options, the same dry run, the same queue."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Job, Study, System
from app.services.judge import save_settings
from app.services.llm import endpoints
from tests.support.api import make_token


@pytest.fixture(autouse=True)
def _estimate_tokens(monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")  # no tokenizer download in a dry run


@pytest.fixture
def api(demo):
    client = demo.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = "Bearer " + make_token(demo, "researcher", "write")
    with demo.app_context():
        names = list(db.session.scalars(select(System.name).order_by(System.name)))
        study = db.session.scalars(select(Study).order_by(Study.id)).first().id
        endpoints.save("lab", base_url="http://127.0.0.1:9/v1", api_key="sk-api-test-0123456789", may_change=True)
        save_settings(base_url="http://127.0.0.1:9/v1", api_key="sk-judge-test-0123456789")  # never called here
    return demo, client, names, study


def jobs(app) -> int:
    with app.app_context():
        return len(db.session.scalars(select(Job.id)).all())


def test_a_judge_run_is_estimated_then_queued_once(api):
    app, client, _, _ = api
    body = {"system": "balanced-34b", "baseline": "terse-13b", "judge_model": "gpt-4o-mini", "dry_run": True}
    before = jobs(app)
    estimate = client.post("/api/v1/judge-runs", json=body)
    assert estimate.status_code == 200, estimate.get_json()
    assert estimate.get_json()["dry_run"] is True and estimate.get_json()["estimate"]["pairs"] > 0
    assert jobs(app) == before
    queued = client.post("/api/v1/judge-runs", json={**body, "dry_run": False})
    assert queued.status_code == 201 and queued.get_json()["job"], queued.get_json()
    assert client.get(f"/api/v1/jobs/{queued.get_json()['job']}").get_json()["kind"] == "judge"
    again = client.post("/api/v1/judge-runs", json={**body, "dry_run": False})
    assert again.status_code == 409 and again.get_json()["job"] == queued.get_json()["job"]
    unknown = client.post("/api/v1/judge-runs", json={**body, "system": "nobody"})
    assert unknown.status_code == 422 and unknown.get_json()["error"]
    assert client.post("/api/v1/judge-runs", json={**body, "profile": "nope"}).status_code == 422


def test_a_judge_run_takes_the_evidence_options(api):
    app, client, _, _ = api
    body = {"system": "balanced-34b", "baseline": "terse-13b", "judge_model": "gpt-4o-mini", "dry_run": True,
            "profile": "evidence", "scope": "all"}
    default = client.post("/api/v1/judge-runs", json=body).get_json()["estimate"]
    small = client.post("/api/v1/judge-runs", json={**body, "max_quotes": 1, "context_tokens": 6000,
                                                    "json_schema": False}).get_json()["estimate"]
    assert default["truncation"]["context_tokens"] == 128_000 and small["truncation"]["context_tokens"] == 6000
    assert small["prompt_tokens_est"] < default["prompt_tokens_est"]
    assert client.post("/api/v1/judge-runs", json={**body, "max_quotes": 0}).status_code == 422
    queued = client.post("/api/v1/judge-runs", json={**body, "dry_run": False, "max_quotes": 2})
    assert queued.status_code == 201, queued.get_json()
    with app.app_context():
        assert db.session.get(Job, queued.get_json()["job"]).params["max_quotes"] == 2


def test_a_rater_run_is_estimated_on_a_study(api):
    _, client, _, study = api
    estimate = client.post("/api/v1/rater-runs", json={"study": study, "rater_model": "gpt-4o-mini", "dry_run": True})
    assert estimate.status_code == 200, estimate.get_json()
    assert estimate.get_json()["estimate"]
    assert client.post("/api/v1/rater-runs", json={"study": 999999, "dry_run": True}).status_code == 404
    named = client.post("/api/v1/rater-runs", json={"study": "L-Eval human evaluation", "dry_run": True})
    assert named.status_code == 422 and named.get_json()["errors"][0]["field"] == "study"  # an id, never a name
    queued = client.post("/api/v1/rater-runs", json={"study": study, "rater_model": "gpt-4o-mini"})
    assert queued.status_code == 201 and client.get(f"/api/v1/jobs/{queued.get_json()['job']}").status_code == 200



def test_a_rater_run_takes_the_forms_profile_and_evidence_options(api):
    """The rater form's profile and evidence options are the API's too (issue 30: the same options as the forms)."""
    app, client, _, study = api
    body = {"study": study, "rater_model": "gpt-4o-mini", "dry_run": True, "profile": "evidence"}
    default = client.post("/api/v1/rater-runs", json=body)
    assert default.status_code == 200, default.get_json()
    small = client.post("/api/v1/rater-runs", json={**body, "context_tokens": 6000}).get_json()["estimate"]
    assert default.get_json()["estimate"]["profile"] == "evidence" == small["profile"]
    assert small["truncation"]["context_tokens"] == 6000
    assert client.post("/api/v1/rater-runs", json={**body, "profile": "nope"}).status_code == 422
    queued = client.post("/api/v1/rater-runs", json={**body, "dry_run": False, "max_quotes": 2})
    assert queued.status_code == 201, queued.get_json()
    with app.app_context():
        params = db.session.get(Job, queued.get_json()["job"]).params
    assert params["profile"] == "evidence" and params["max_quotes"] == 2

def test_a_generation_run_names_an_admins_endpoint(api):
    _, client, _, _ = api
    body = {"endpoint": "lab", "model": "api-model", "question_set": "human_eval", "dry_run": True}
    estimate = client.post("/api/v1/generation-runs", json=body)
    assert estimate.status_code == 200, estimate.get_json()
    text = estimate.get_data(as_text=True)
    assert "sk-api-test" not in text and estimate.get_json()["estimate"]["manifest"]
    unknown = client.post("/api/v1/generation-runs", json={**body, "endpoint": "elsewhere"})
    assert unknown.status_code == 422 and "elsewhere" in unknown.get_json()["error"]
    assert client.post("/api/v1/generation-runs", json={**body, "base_url": "http://evil"}).status_code == 422
    queued = client.post("/api/v1/generation-runs", json={**body, "dry_run": False})
    assert queued.status_code == 201 and queued.get_json()["run"] and queued.get_json()["job"]
