"""A judge job under a budget, its server killed with kill -9 while calls are in flight: the usage it
recorded can only be too high, never too low, before the kill and after the resumed job finishes."""
from __future__ import annotations

import json

import pytest

from app import create_app
from app.extensions import db
from app.services.judge import RunSpec, current_prompt, launch, save_settings
from tests.e2e.conftest import start_server, stop_server
from tests.support.databases import json_value
from tests.support.judge_data import BASELINE, EXPECTED, SYSTEM, marker_judge, write_judge_dataset
from tests.support.live import prepare_instance
from tests.support.openai_stub import StubOpenAIServer
from tests.services.test_faults import kill_9, query, wait_until

MODEL = "judge-test"
PER_CALL_USD = 0.25  # the stub's fixed usage (100, 50) at 2000 / 1000 USD per million tokens
BUDGET_USD = 60.0


def _launch_judge_job(instance, stub: StubOpenAIServer) -> int:
    """Point the judge at the stub and queue a budgeted run, for the next server start to pick up."""
    app = create_app({"INSTANCE_PATH": instance})
    with app.app_context():
        save_settings(base_url=stub.base_url, api_key="sk-faults-0123456789abcdef", max_retries=0, timeout_s=30.0,
                      prices_json=json.dumps({MODEL: [2000, 1000]}))
        spec = RunSpec(SYSTEM, BASELINE, MODEL, current_prompt().id, 0.0, "human_eval")
        job_id = launch(spec, concurrency=4, budget_usd=BUDGET_USD).id
        db.session.remove()
        db.engine.dispose()
    return job_id


def _recorded(instance, job_id: int) -> tuple[str, dict]:
    status, result = query(instance, "SELECT status, result FROM jobs WHERE id = ?", job_id)[0]
    return status, json_value(result) if result else {}


@pytest.mark.slow
def test_a_judge_job_killed_mid_call_over_counts_and_its_resume_keeps_within_the_budget(tmp_path):
    instance = tmp_path / "instance"
    prepare_instance(instance, demo=False, folders=(write_judge_dataset(tmp_path / "data"),))
    with StubOpenAIServer(policy=marker_judge, usage=(100, 50), latency_s=1.5) as stub:
        job_id = _launch_judge_job(instance, stub)
        server = start_server(instance, {"LEVAL_WORKERS": "1"})
        try:
            # Killed while calls the server has received are still unanswered.
            wait_until(lambda: stub.calls >= 6 and stub._active >= 2, 60, "judge calls in flight")
            kill_9(server)
        finally:
            if server.process.poll() is None:
                stop_server(server)
        received = stub.calls
        status, partial = _recorded(instance, job_id)
        assert status == "running" and 0 < received < 12, "killed mid-job"
        # Every call the stub received is counted, the unanswered ones at more than they can cost.
        assert partial["api_calls"] >= received
        assert partial["cost_usd"] >= received * PER_CALL_USD
        assert partial["reserved_calls"] >= 1 and partial["reserved_usd"] > PER_CALL_USD * partial["reserved_calls"]
        assert partial["prompt_tokens"] >= 100 * received and partial["completion_tokens"] >= 50 * received

        server = start_server(instance, {"LEVAL_WORKERS": "1"})  # the restart resumes the dead worker's job
        try:
            wait_until(lambda: _recorded(instance, job_id)[0] in ("done", "failed"), 90, "the resumed job")
        finally:
            stop_server(server)
        status, final = _recorded(instance, job_id)
        assert status == "done", final
        total = stub.calls
    assert total >= 12 and final["wins"] == EXPECTED["wins"]
    # Over-counted, never under: the calls lost in flight stay counted at their reservations.
    assert final["api_calls"] >= total and final["cost_usd"] >= total * PER_CALL_USD
    assert final["reserved_calls"] == partial["reserved_calls"]
    assert final["cost_usd"] <= BUDGET_USD and total * PER_CALL_USD <= BUDGET_USD
