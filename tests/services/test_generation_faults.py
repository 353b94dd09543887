"""kill -9 of the server in the middle of a generation job: the restart resumes it and repeats no
call whose reply was stored (only a call in flight at the kill may be made again)."""
from __future__ import annotations


import pytest

from app import create_app
from app.extensions import db
from app.core.generation import plan
from app.services.generation import runs
from app.services.generation.spec import RunSpec, endpoint_of
from tests.e2e.conftest import start_server, stop_server
from tests.support.databases import json_value
from tests.support.live import prepare_instance
from tests.support.openai_stub import StubOpenAIServer
from tests.services.test_faults import kill_9, query, wait_until

MODEL = "kill-test-model"


def launch(instance, base_url: str) -> tuple[int, RunSpec]:
    app = create_app({"INSTANCE_PATH": instance})
    with app.app_context():
        spec = RunSpec(base_url=base_url, model=MODEL, question_set="human_eval", system_name="killed-run",
                       concurrency=1)
        run, job = runs.launch(spec)
        job_id = job.id
        db.session.remove()
        db.engine.dispose()
    return job_id, spec


def key_of(spec: RunSpec, body: dict) -> str:
    settings = plan.Settings(model=spec.model, endpoint=endpoint_of(spec.base_url), context_tokens=spec.context_tokens,
                             max_tokens=spec.max_tokens, temperature=spec.temperature, seed=spec.seed)
    return plan.call_key(settings, body["messages"])


@pytest.mark.slow
def test_a_generation_job_survives_kill_9_without_repeating_a_stored_call(tmp_path):
    instance = tmp_path / "instance"
    prepare_instance(instance)
    env = {"LEVAL_WORKERS": "1", "LEVAL_TOKENIZER": "estimate", "OPENAI_API_KEY": "sk-kill-test-0123456789"}
    with StubOpenAIServer(policy=lambda body: "An answer.", latency_s=0.3) as stub:
        job_id, spec = launch(instance, stub.base_url)
        server = start_server(instance, env)
        try:
            wait_until(lambda: query(instance, "SELECT COUNT(*) FROM generation_calls")[0][0] >= 3, 60,
                       "the first stored calls")
            kill_9(server)
        finally:
            if server.process.poll() is None:
                stop_server(server)
        stored_before = {key for (key,) in query(instance, "SELECT cache_key FROM generation_calls")}
        answers_before = query(instance, "SELECT COUNT(*) FROM predictions p JOIN systems s ON s.id = p.system_id "
                                         "WHERE s.name = 'killed-run'")[0][0]
        status, done = query(instance, "SELECT status, done FROM jobs WHERE id = ?", job_id)[0]
        assert status == "running" and 3 <= len(stored_before) < 10, "killed mid-job"
        # One call per question; the kill may fall between storing a reply and storing its answer.
        assert len(stored_before) - 1 <= answers_before <= len(stored_before)
        sent_before = len(stub.requests)

        server = start_server(instance, env)  # the restart finds the dead worker's job and resumes it
        try:
            wait_until(lambda: query(instance, "SELECT 1 FROM jobs WHERE id = ? AND status IN ('done', 'failed')",
                                     job_id), 90, "the resumed job to finish")
        finally:
            stop_server(server)
        status, attempts, result = query(instance, "SELECT status, attempts, result FROM jobs WHERE id = ?", job_id)[0]
        assert (status, attempts) == ("done", 2)
        assert json_value(result)["answered"] == 10
        after = stub.requests[sent_before:]
        repeated = [r for r in after if key_of(spec, r.body) in stored_before]
        assert repeated == [], "a call whose reply was stored was made again"
        assert len(after) == 10 - len(stored_before)
        assert query(instance, "SELECT COUNT(*) FROM generation_calls")[0][0] == 10
        assert query(instance, "SELECT COUNT(*) FROM predictions p JOIN systems s ON s.id = p.system_id "
                               "WHERE s.name = 'killed-run'")[0][0] == 10
