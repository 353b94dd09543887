"""The judge in the app: jobs through a real worker against the stub server, the DB cache,
budget, cancel and resume, the pages, settings masking, roles, the CLI and win_rates()."""
from __future__ import annotations

import json
import logging

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Job, JudgePrompt, LLMJudgment, Prediction, System
from app.services.importers import import_path
from app.services.jobs import DuplicateJob, cancel_job, resume_job
from app.services.jobs.worker import start_workers
from app.services.judge import RunSpec, dry_run, launch, run_report, save_settings, win_rates
from tests.support.judge_data import (
    BASELINE, DOCUMENT_MARK, EXPECTED, EXPECTED_ALL, SCRIPT_ANSWER, SYSTEM, marker_judge, write_judge_dataset,
)
from tests.support.jobs import wait_for_job
from tests.support.openai_stub import Fault

SECRET = "sk-judging-SECRET-do-not-leak-0123456789"


@pytest.fixture(autouse=True)
def no_openai_environment(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


STUB_POLICY = marker_judge


@pytest.fixture
def judge_app(app, stub, tmp_path):
    """The app with the marked data set imported and the judge pointed at the stub."""
    with app.app_context():
        report = import_path(write_judge_dataset(tmp_path / "data"))
        assert not report.failed and report.unmatched == 0
        save_settings(base_url=stub.base_url, api_key=SECRET, max_retries=2, timeout_s=5.0)
    return app


@pytest.fixture
def worker(judge_app):
    consumer = start_workers(judge_app, 1)
    yield consumer
    consumer.stop(graceful=True)


def spec(scope="human_eval", model="gpt-4", prompt_id=None) -> RunSpec:
    if prompt_id is None:
        from app.services.judge import current_prompt

        prompt_id = current_prompt().id
    return RunSpec(SYSTEM, BASELINE, model, prompt_id, 0.0, scope)


def start(app, *, concurrency=4, budget_usd=None, **spec_args) -> int:
    with app.app_context():
        return launch(spec(**spec_args), concurrency=concurrency, budget_usd=budget_usd).id


def wait(app, job_id: int, statuses=("done",), timeout=20.0, until=None) -> Job:
    def reached(job: Job) -> bool:
        if job.status in ("done", "failed", "cancelled") and job.status not in statuses:
            raise AssertionError(f"job {job_id} ended {job.status}: {job.error or job.message}")
        return job.status in statuses and (until is None or until(job))

    return wait_for_job(app, job_id, reached, timeout, str(statuses))


def run_job(app, **kwargs) -> Job:
    return wait(app, start(app, **kwargs))


def judgments(app) -> list[LLMJudgment]:
    with app.app_context():
        rows = list(db.session.scalars(select(LLMJudgment).order_by(LLMJudgment.id)))
        db.session.expunge_all()
        return rows


# -- the job ---------------------------------------------------------------------------------


def test_job_judges_both_orders_and_gives_exact_counts_and_win_rates(judge_app, stub, worker):
    job = run_job(judge_app)

    result = job.result
    for key in ("wins", "losses", "ties", "errors", "inconsistent"):
        assert result[key] == EXPECTED[key], key
    assert result["win_rate"] == pytest.approx(62.5) == pytest.approx(EXPECTED["win_rate"])
    assert result["win_rate_fastchat"] == pytest.approx(EXPECTED["win_rate_fastchat"])
    assert result["consistency"] == pytest.approx(4 / 6)
    assert result["ci_low"] <= result["win_rate"] <= result["ci_high"]
    assert (result["api_calls"], result["cached"], result["stopped"]) == (12, 0, None)
    assert result["cost_usd"] == pytest.approx((result["prompt_tokens"] * 30 + result["completion_tokens"] * 60) / 1e6)
    assert (job.done, job.total) == (12, 12)

    assert stub.calls == 12
    bodies = [request.body for request in stub.requests]
    assert {body["temperature"] for body in bodies} == {0.0}
    assert {body["model"] for body in bodies} == {"gpt-4"}
    assert not any(DOCUMENT_MARK in json.dumps(body) for body in bodies), "the judge must not see the document"
    assert all("The human reference answer" in body["messages"][-1]["content"] for body in bodies)

    rows = judgments(judge_app)
    assert len(rows) == 12 and {row.order for row in rows} == {"AB", "BA"}
    assert all(row.verdict in "ABC" and "Final" in row.raw_reply and row.error is None for row in rows)
    assert all(row.prompt_tokens > 0 and row.completion_tokens > 0 and row.latency_ms > 0 for row in rows)
    assert all(row.job_id == job.id and row.question_id and row.temperature == 0.0 for row in rows)


def test_a_rerun_and_an_overlapping_job_make_no_calls_for_cached_pairs(judge_app, stub, worker):
    run_job(judge_app)
    with judge_app.app_context(), pytest.raises(DuplicateJob):
        launch(spec(), concurrency=4, budget_usd=None)

    again = run_job(judge_app, concurrency=2)  # other params: a new job, same content
    assert (again.result["api_calls"], again.result["cached"], stub.calls) == (0, 12, 12)
    assert again.result["win_rate"] == pytest.approx(EXPECTED["win_rate"])

    overlapping = run_job(judge_app, scope="all")  # adds the two task questions
    assert (overlapping.result["api_calls"], overlapping.result["cached"], stub.calls) == (4, 12, 16)
    assert {k: overlapping.result[k] for k in EXPECTED_ALL} == EXPECTED_ALL
    assert len(judgments(judge_app)) == 16


def test_429_with_retry_after_is_honoured(judge_app, stub, worker):
    stub.add_faults(Fault.rate_limit(retry_after="1"))
    job = run_job(judge_app, concurrency=1)

    first, retried = stub.requests[0], stub.requests[1]
    assert (first.status, retried.status) == (429, 200)
    assert retried.received_at - first.received_at >= 0.95
    assert job.result["errors"] == 0 and job.result["wins"] == EXPECTED["wins"]


def test_exhausted_retries_become_error_rows_that_resume_retries(judge_app, stub, worker):
    with judge_app.app_context():
        save_settings(max_retries=1)
    stub.add_faults(Fault.server_error(500, retry_after_ms=10), Fault.server_error(503, retry_after_ms=10))
    job_id = start(judge_app, concurrency=1)
    failed = wait(judge_app, job_id, ("failed",))

    assert "1 of 12 judgments failed" in failed.error and "resume" in failed.error
    assert failed.result["errors"] == 1
    assert failed.result["wins"] + failed.result["losses"] + failed.result["ties"] == 11
    errors = [row for row in judgments(judge_app) if row.verdict is None]
    assert len(errors) == 1 and "InternalServerError" in errors[0].error

    with judge_app.app_context():
        resume_job(db.session.get(Job, job_id))
    done = wait(judge_app, job_id)
    assert done.result["errors"] == 0 and done.result["wins"] == EXPECTED["wins"]
    assert done.result["api_calls"] == 13 and done.result["cached"] == 11  # usage adds up over attempts
    assert stub.calls == 2 + 11 + 1
    rows = judgments(judge_app)
    assert len(rows) == 12 and all(row.verdict for row in rows)  # the error row was replaced


def test_a_timeout_becomes_an_error_row(judge_app, stub, worker):
    with judge_app.app_context():
        save_settings(max_retries=0, timeout_s=0.3)
    stub.add_faults(Fault.hang(3.0))
    failed = wait(judge_app, start(judge_app, concurrency=1), ("failed",))
    [error] = [row for row in judgments(judge_app) if row.verdict is None]
    assert "Timeout" in error.error and failed.result["errors"] == 1


def test_a_reply_without_verdict_is_kept_and_retried_on_resume(judge_app, stub, worker, client, auth):
    stub.add_faults(Fault.no_verdict())
    job_id = start(judge_app, concurrency=1)
    wait(judge_app, job_id, ("failed",))
    [error] = [row for row in judgments(judge_app) if row.verdict is None]
    assert error.raw_reply.startswith("I cannot decide") and "no verdict" in error.error

    auth.login("researcher")
    page = client.get(f"/judge/runs/{job_id}").get_data(as_text=True)
    assert "I cannot decide between these answers." in page and "no verdict token" in page
    client.post(f"/jobs/{job_id}/resume", data={"csrf_token": auth.token()})
    assert wait(judge_app, job_id).result["errors"] == 0
    assert stub.calls == 13


def test_the_budget_stops_the_job_cleanly_and_a_larger_budget_finishes(judge_app, stub, worker):
    stub.usage = (100, 50)
    with judge_app.app_context():
        save_settings(prices_json=json.dumps({"judge-test": [2000, 1000]}))  # 0.25 USD per call
    stopped = run_job(judge_app, model="judge-test", concurrency=1, budget_usd=0.75)

    assert stopped.result["stopped"] == "budget"
    assert stopped.result["api_calls"] == 3 and stopped.result["cost_usd"] == pytest.approx(0.75)
    assert stopped.result["skipped"] == 9 and stub.calls == 3
    with judge_app.app_context():
        assert run_report(spec(model="judge-test")).pending == 9

    finished = run_job(judge_app, model="judge-test", concurrency=1, budget_usd=10.0)
    assert (finished.result["api_calls"], finished.result["cached"], finished.result["stopped"]) == (9, 3, None)
    assert finished.result["wins"] == EXPECTED["wins"] and stub.calls == 12


def test_the_budget_is_cumulative_over_a_cancel_and_resume(judge_app, stub, worker):
    stub.usage, stub.latency_s = (100, 50), 0.3
    with judge_app.app_context():
        save_settings(prices_json=json.dumps({"judge-test": [2000, 1000]}))
    job_id = start(judge_app, model="judge-test", concurrency=1, budget_usd=2.0)  # 8 calls at most
    wait(judge_app, job_id, ("running",), until=lambda job: job.done >= 2)
    with judge_app.app_context():
        cancel_job(db.session.get(Job, job_id))
    cancelled = wait(judge_app, job_id, ("cancelled",))
    assert cancelled.result["api_calls"] < 8

    stub.latency_s = 0.0
    with judge_app.app_context():
        resume_job(db.session.get(Job, job_id))
    done = wait(judge_app, job_id)
    # The resumed attempt spends only what the first left: 8 calls in all, not 8 more.
    assert done.result["stopped"] == "budget" and done.result["cost_usd"] == pytest.approx(2.0)
    assert done.result["api_calls"] == 8 == stub.calls


def test_a_budget_needs_a_price(judge_app):
    from app.services.judge import JudgeRunError

    with judge_app.app_context(), pytest.raises(JudgeRunError, match="no price"):
        launch(spec(model="local-llama"), concurrency=1, budget_usd=1.0)


def test_cancel_then_resume_judges_only_what_is_missing(judge_app, stub, worker):
    stub.latency_s = 0.15
    job_id = start(judge_app, concurrency=1)
    wait(judge_app, job_id, ("running",), until=lambda job: job.done >= 3)
    with judge_app.app_context():
        cancel_job(db.session.get(Job, job_id))
    cancelled = wait(judge_app, job_id, ("cancelled",))
    assert 3 <= cancelled.done < 12 and stub.calls < 12

    with judge_app.app_context():
        resume_job(db.session.get(Job, job_id))
    done = wait(judge_app, job_id)
    assert stub.calls == 12, "a judgment made before the cancel was made again"
    assert done.result["api_calls"] == 12 and done.result["wins"] == EXPECTED["wins"]
    assert done.attempts == 2


def test_changed_predictions_make_a_new_job_that_judges_only_the_change(judge_app, stub, worker, client, auth):
    first = run_job(judge_app)
    with judge_app.app_context():
        system_id = db.session.scalar(select(System.id).where(System.name == SYSTEM))
        prediction = db.session.scalars(
            select(Prediction).where(Prediction.system_id == system_id, Prediction.text.like("System answer 3 %"))
        ).one()
        prediction.text = "System answer 3 <score:3>"  # the tie becomes two wins
        db.session.commit()
    second = run_job(judge_app)
    assert second.id != first.id and second.result["api_calls"] == 2 and stub.calls == 14
    assert (second.result["wins"], second.result["ties"]) == (EXPECTED["wins"] + 2, EXPECTED["ties"] - 2)
    auth.login("researcher")
    assert "changed since this run was launched" in client.get(f"/judge/runs/{first.id}").get_data(as_text=True)


# -- the pages -------------------------------------------------------------------------------


def form_data(token: str, **overrides) -> dict:
    data = {"system": SYSTEM, "baseline": BASELINE, "scope": "human_eval", "judge_model": "gpt-4",
            "prompt_id": "1", "temperature": "0", "concurrency": "4", "budget_usd": "", "csrf_token": token}
    data.update(overrides)
    return data


def test_dry_run_estimates_calls_and_counts_cached_ones(judge_app, stub, worker, client, auth):
    auth.login("researcher")
    page = client.post("/judge/", data=form_data(auth.token(), estimate="Estimate")).get_data(as_text=True)
    assert 'data-estimate="calls">12<' in page and 'data-estimate="cached">0<' in page
    assert "Dry run: 6 pairs, 12 judgments" in page and stub.calls == 0

    run_job(judge_app)
    page = client.post("/judge/", data=form_data(auth.token(), estimate="Estimate")).get_data(as_text=True)
    assert 'data-estimate="calls">0<' in page and 'data-estimate="cached">12<' in page
    with judge_app.app_context():
        estimate = dry_run(spec(scope="all"))
    assert (estimate["calls"], estimate["cached"], estimate["pairs"]) == (4, 12, 8)


def test_launch_from_the_page_and_read_the_report(judge_app, worker, client, auth):
    auth.login("researcher")
    response = client.post("/judge/", data=form_data(auth.token(), launch="Launch"))
    assert response.status_code == 302 and "/judge/runs/" in response.location
    job_id = int(response.location.rsplit("/", 1)[1])
    wait(judge_app, job_id)
    page = client.get(f"/judge/runs/{job_id}").get_data(as_text=True)

    assert "L-Eval aggregation" in page and "FastChat aggregation" in page
    assert 'data-metric="win_rate">62.5%<' in page and 'data-metric="win_rate_fastchat">58.3%<' in page
    assert 'data-metric="inconsistent">2<' in page and 'data-metric="consistency">66.7%<' in page
    assert 'data-metric="errors">0<' in page and "Bootstrap 95% interval" in page
    # Model output and answers are escaped, never markup.
    assert SCRIPT_ANSWER not in page and "&lt;script&gt;alert(" in page
    assert "<b>Final</b>" not in page and "&lt;b&gt;Final&lt;/b&gt;" in page

    listing = client.get("/judge/").get_data(as_text=True)
    assert f"#{job_id}" in listing and "62.5%" in listing
    again = client.post("/judge/", data=form_data(auth.token(), launch="Launch"))
    assert again.location.endswith(f"/judge/runs/{job_id}")  # the same run is not queued twice


def test_the_key_is_masked_and_never_leaks(judge_app, stub, worker, client, auth, caplog):
    caplog.set_level(logging.DEBUG)
    auth.login("admin")
    other = "sk-another-SECRET-key-9876543210"
    response = client.post("/judge/settings", data={
        "csrf_token": auth.token(), "base_url": stub.base_url, "api_key": other, "model": "gpt-4", "baseline": "",
        "max_retries": "2", "timeout_s": "5", "prices": json.dumps({"gpt-4": [30, 60]}),
    })
    assert response.status_code == 302
    page = client.get("/judge/settings").get_data(as_text=True)
    assert other not in page and "sk-…3210" in page

    # Saving again with the key field empty keeps the key.
    client.post("/judge/settings", data={
        "csrf_token": auth.token(), "base_url": stub.base_url, "api_key": "", "model": "gpt-4", "baseline": "",
        "max_retries": "1", "timeout_s": "5", "prices": json.dumps({"gpt-4": [30, 60]}),
    })
    stub.add_faults(Fault.server_error(500, retry_after_ms=5), Fault.server_error(500, retry_after_ms=5))
    job_id = start(judge_app, concurrency=1)
    wait(judge_app, job_id, ("failed",))
    assert stub.requests[0].authorization == f"Bearer {other}"

    seen = [client.get(url).get_data(as_text=True) for url in (
        "/judge/", f"/judge/runs/{job_id}", "/judge/settings", "/judge/prompts", "/judge/win-rates.json",
        "/jobs", f"/jobs/{job_id}", "/jobs/api", f"/jobs/api/{job_id}",
    )]
    with judge_app.app_context():
        job = db.session.get(Job, job_id)
        exported = json.dumps([job.params, job.result, job.error, job.message])
        exported += json.dumps([[r.raw_reply, r.error] for r in db.session.scalars(select(LLMJudgment))])
    for text in [*seen, exported, caplog.text]:
        assert other not in text and SECRET not in text

    client.post("/judge/settings", data={
        "csrf_token": auth.token(), "base_url": stub.base_url, "clear_api_key": "y", "model": "gpt-4",
        "baseline": "", "max_retries": "1", "timeout_s": "5", "prices": "{}",
    })
    assert "No key saved" in client.get("/judge/settings").get_data(as_text=True)


def test_environment_variables_are_the_defaults(app, client, auth, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    auth.login("researcher")
    page = client.get("/judge/settings").get_data(as_text=True)
    assert SECRET not in page and "sk-…6789" in page and "from the environment" in page
    assert "http://127.0.0.1:9/v1" in page


@pytest.mark.parametrize(("field", "value", "message"), [
    ("prices", "{not json", "not valid JSON"),
    ("prices", '{"gpt-4": [-1, 2]}', "both &gt;= 0"),
    ("base_url", "ftp://example", "must start with http"),
])
def test_bad_settings_are_refused(app, client, auth, field, value, message):
    auth.login("admin")
    data = {"csrf_token": auth.token(), "base_url": "", "model": "gpt-4", "baseline": "", "max_retries": "2",
            "timeout_s": "5", "prices": "{}", field: value}
    page = client.post("/judge/settings", data=data).get_data(as_text=True)
    assert message in page
    with app.app_context():
        from app.services.judge import load_settings

        assert load_settings().prices["gpt-4"].prompt_per_million == 30.0  # nothing was saved


def test_judge_pages_are_for_staff_only(judge_app, client, auth):
    job_id = start(judge_app)
    assert client.get("/judge/").status_code == 302  # signed out: to the login page
    auth.login("annotator")
    for url in ("/judge/", "/judge/settings", "/judge/prompts", "/judge/prompts/1", f"/judge/runs/{job_id}",
                "/judge/win-rates.json"):
        assert client.get(url).status_code == 403, url
    token = auth.token()
    assert client.post("/judge/", data=form_data(token, launch="Launch")).status_code == 403
    assert client.post("/judge/settings", data={"csrf_token": token, "api_key": "x"}).status_code == 403
    assert client.post("/judge/prompts/1", data={"csrf_token": token}).status_code == 403


def test_editing_a_prompt_creates_a_new_version(judge_app, client, auth):
    auth.login("researcher")
    page = client.get("/judge/prompts/1").get_data(as_text=True)
    assert "studio-pairwise" in page and "v1" in page
    with judge_app.app_context():
        v1 = db.session.get(JudgePrompt, 1)
        system_text, user_template = v1.system_text, v1.user_template

    response = client.post("/judge/prompts/1", data={
        "csrf_token": auth.token(), "system_text": system_text + " Answer in English.", "user_template": user_template})
    assert response.status_code == 302
    with judge_app.app_context():
        versions = db.session.scalars(select(JudgePrompt).where(JudgePrompt.name == "studio-pairwise")
                                      .order_by(JudgePrompt.version)).all()
        assert [(p.name, p.version) for p in versions] == [("studio-pairwise", 1), ("studio-pairwise", 2)]
        assert versions[0].system_text == system_text  # v1 untouched
        assert versions[1].system_text.endswith("Answer in English.")
        # A new prompt version is a new cache identity: nothing is cached for it.
        assert dry_run(spec(prompt_id=versions[1].id))["cached"] == 0

    for data, message in (
        ({"system_text": system_text, "user_template": user_template}, "nothing changed"),
        ({"system_text": system_text, "user_template": "{question} {reference} {answer_a}"}, "{answer_b}"),
        ({"system_text": "Judge.", "user_template": user_template}, "[[A]]"),
    ):
        page = client.post("/judge/prompts/1", data={"csrf_token": auth.token(), **data}).get_data(as_text=True)
        assert message in page
    with judge_app.app_context():
        default_versions = select(func.count()).select_from(JudgePrompt).where(JudgePrompt.name == "studio-pairwise")
        assert db.session.scalar(default_versions) == 2
        v2_id = versions[1].id

    client.post(f"/judge/prompts/{v2_id}", data={"csrf_token": auth.token(), "system_text": "Say [[A]], [[B]] or [[C]].",
                                                 "user_template": user_template})
    with judge_app.app_context():
        v3_id = db.session.scalar(select(JudgePrompt.id).where(JudgePrompt.name == "studio-pairwise",
                                                               JudgePrompt.version == 3))
    assert "lacks L-Eval" in client.get(f"/judge/prompts/{v3_id}").get_data(as_text=True)


# -- win rates for the leaderboard -------------------------------------------------------------


def test_win_rates_per_judge_model_and_prompt_version(judge_app, stub, worker):
    with judge_app.app_context():
        assert win_rates() == {}
    run_job(judge_app)
    run_job(judge_app, model="local-llama")  # no price: tokens only

    with judge_app.app_context():
        table = win_rates()
        assert set(table) == {SYSTEM}
        entries = {entry["judge_model"]: entry for entry in table[SYSTEM]}
        assert set(entries) == {"gpt-4", "local-llama"}
        for entry in entries.values():
            assert entry["win_rate"] == pytest.approx(EXPECTED["win_rate"])
            assert entry["win_rate_fastchat"] == pytest.approx(EXPECTED["win_rate_fastchat"])
            assert entry["consistency"] == pytest.approx(EXPECTED["consistency"])
            assert (entry["errors"], entry["inconsistent"], entry["n_pairs"], entry["pending"]) == (0, 2, 6, 0)
            assert (entry["prompt_version"], entry["baseline"], entry["scope"]) == (1, BASELINE, "human_eval")
            assert entry["ci_low"] <= entry["win_rate"] <= entry["ci_high"]
        assert win_rates([BASELINE]) == {} and win_rates(["nobody"]) == {}
        assert win_rates([SYSTEM], baseline="other") == {}
        local = db.session.scalars(select(Job).where(Job.params["judge_model"].as_string() == "local-llama")).one()
        assert local.result["cost_usd"] is None and local.result["prompt_tokens"] > 0


def test_a_row_stored_meanwhile_by_another_job_is_updated_not_duplicated(judge_app, monkeypatch):
    from app.core.judge import JudgmentResult
    from app.services.judge import DBJudgeCache

    def result(verdict, error=None):
        return JudgmentResult("p", "AB", verdict, f"reply {verdict}", 10, 5, 1.0, error, "gpt-4", "k" * 64)

    with judge_app.app_context():
        cache = DBJudgeCache(pairs={}, judge_model="gpt-4", prompt_id=None, temperature=0.0)
        cache.record(result(None, "a failed call"))
        db.session.commit()
        # The other job's row is invisible to the first lookup, as in a race between two workers.
        from app.services.llm import call_cache

        real_row, hidden = call_cache.row_of, [True]

        def racing_lookup(model, key):
            return None if hidden and hidden.pop() else real_row(model, key)

        monkeypatch.setattr(call_cache, "row_of", racing_lookup)
        cache.put("k" * 64, result("A"))
        db.session.commit()
        assert not hidden, "the racing lookup was not used"
        [row] = db.session.scalars(select(LLMJudgment)).all()
        assert (row.verdict, row.error, row.raw_reply) == ("A", None, "reply A")
        assert cache.get("k" * 64).verdict == "A"

        cache.record(result(None, "a late failure"))  # never replaces a verdict
        db.session.commit()
        assert db.session.scalars(select(LLMJudgment)).one().verdict == "A"


@pytest.mark.parametrize("value, message", [
    ("gpt\x00-4", "Judge model contains a NUL character (\\u0000)"),
    ("m" * 121, "Judge model is 121 characters long; at most 120 are allowed."),
])
def test_the_launch_form_refuses_a_model_name_the_database_cannot_store(judge_app, client, auth, value, message):
    auth.login("researcher")
    response = client.post("/judge/", data=form_data(auth.token(), launch="Launch", judge_model=value))
    page = response.get_data(as_text=True)
    assert response.status_code == 200 and message in page and "Check the highlighted fields." in page
    with judge_app.app_context():
        assert db.session.scalar(select(func.count(Job.id))) == 0


@pytest.mark.parametrize("field, label", [("system_text", "System message"), ("user_template", "User message template")])
def test_a_prompt_edit_with_a_nul_character_is_refused_and_no_version_is_saved(judge_app, client, auth, field, label):
    auth.login("researcher")
    assert client.get("/judge/prompts/1").status_code == 200  # the default prompt is made on first use
    with judge_app.app_context():
        v1 = db.session.get(JudgePrompt, 1)
        data = {"system_text": v1.system_text, "user_template": v1.user_template}
    data[field] = data[field] + " \x00"
    page = client.post("/judge/prompts/1", data={"csrf_token": auth.token(), **data}).get_data(as_text=True)
    assert f"{label} contains a NUL character (\\u0000)" in page
    with judge_app.app_context():
        assert db.session.scalar(select(func.count(JudgePrompt.id)).where(JudgePrompt.name == "studio-pairwise")) == 1
