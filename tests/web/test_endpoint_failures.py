"""A failed LLM call tells researchers only "the endpoint failed"; admins read what the network did.

A refused connection (a closed port), an HTTP error status (an open port speaking HTTP) and a timeout
must read the same to a researcher on the run pages, the job pages and the jobs JSON: otherwise a run
tells open ports from closed ones. Real calls: the openai client against the stub on 127.0.0.1 and
against a port nobody listens on.
"""
from __future__ import annotations

import re
import socket

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import GenerationRun, LLMJudgment
from app.services.judge import save_settings
from app.services.llm.failures import ENDPOINT_FAILED
from tests.support.jobs import wait_for_job
from tests.support.judge_data import marker_judge
from tests.support.openai_stub import Fault
from tests.web.test_generation import form
from tests.web import test_judge as judging

# The judge's fixtures (tests/web/test_judge.py), used here by name.
judge_app = judging.judge_app
no_openai_environment = judging.no_openai_environment
worker = judging.worker
start, wait = judging.start, judging.wait

STUB_POLICY = marker_judge
MODELS = {"status": "judge-a", "timeout": "judge-b", "refused": "judge-c"}  # names that say nothing
DETAIL = re.compile(r"Error code|InternalServerError|Timeout|timed out|APIConnectionError|Connection|refused|"
                    r"\b500\b")


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _failed_judge_run(app, stub, mode: str) -> int:
    """A judge job whose first call fails as `mode` says; return its id once it failed."""
    with app.app_context():
        if mode == "status":
            save_settings(max_retries=0)
            stub.add_faults(Fault.server_error(500))
        elif mode == "timeout":
            save_settings(max_retries=0, timeout_s=0.3)
            stub.add_faults(Fault.hang(3.0))
        else:
            save_settings(base_url=closed_port_url(), max_retries=0)
    job_id = start(app, model=MODELS[mode], concurrency=1)
    wait(app, job_id, ("failed",))
    with app.app_context():
        save_settings(base_url=stub.base_url, api_key="sk-back-to-the-stub-0123456789", max_retries=0, timeout_s=5.0)
    return job_id


def _error_texts(page: str) -> list[str]:
    return re.findall(r'data-field="call-error">([^<]*)<', page)


def test_researchers_read_one_text_for_every_network_failure_and_admins_the_detail(judge_app, stub, worker,
                                                                                  client, auth):
    jobs = {mode: _failed_judge_run(judge_app, stub, mode) for mode in ("status", "timeout", "refused")}
    with judge_app.app_context():
        stored = {row.judge_model: row.error for row in db.session.scalars(select(LLMJudgment))
                  if row.error is not None}
    assert "InternalServerError" in stored["judge-a"] and "Timeout" in stored["judge-b"]
    assert "APIConnectionError" in stored["judge-c"]  # the detail is kept, for admins

    auth.login("researcher")
    seen = {}
    for mode, job_id in jobs.items():
        page = client.get(f"/judge/runs/{job_id}").get_data(as_text=True)
        errors = _error_texts(page)
        assert errors and set(errors) == {ENDPOINT_FAILED}, (mode, errors)
        assert not DETAIL.search(page), (mode, DETAIL.search(page))
        api = client.get(f"/jobs/api/{job_id}").get_json()
        assert not DETAIL.search(str(api)), (mode, api)
        seen[mode] = (sorted(set(errors)), re.sub(r"\d+", "N", api["error"]))
    assert seen["status"] == seen["timeout"] == seen["refused"]  # nothing tells the three apart

    auth.logout()
    auth.login("admin")
    page = client.get(f"/judge/runs/{jobs['status']}").get_data(as_text=True)
    assert any("InternalServerError" in text for text in _error_texts(page))
    page = client.get(f"/judge/runs/{jobs['refused']}").get_data(as_text=True)
    assert any("APIConnectionError" in text for text in _error_texts(page))


@pytest.fixture
def _estimate_tokens(monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")


def test_a_generation_run_s_failed_calls_read_the_same_way(demo, client, auth, stub, workers, _estimate_tokens):
    """The run page's last failed call and the job's error (it quotes that call) hide the detail from researchers."""
    stub.add_faults(*[Fault.server_error(500, retry_after_ms=1) for _ in range(80)])
    auth.login("researcher")
    response = client.post("/generate/", data=form(demo, auth, stub, launch="Start", concurrency="1"))
    assert response.status_code == 302
    with demo.app_context():
        run = db.session.scalars(select(GenerationRun)).one()
        run_id, job_id = run.id, run.job_id
    job = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=60)
    stub.clear_faults()
    assert job.status == "failed" and "InternalServerError" in job.error  # stored whole

    page = client.get(f"/generate/runs/{run_id}").get_data(as_text=True)
    assert f'data-field="last-error">Last failed call: {ENDPOINT_FAILED}<' in page and not DETAIL.search(page)
    for url in (f"/jobs/{job_id}", "/jobs"):
        assert not DETAIL.search(client.get(url).get_data(as_text=True)), url
    api = client.get(f"/jobs/api/{job_id}").get_json()
    assert api["error"].endswith(f"[{ENDPOINT_FAILED}]") and not DETAIL.search(str(api))
    assert not DETAIL.search(str(client.get(f"/jobs/api?ids={job_id}").get_json()))

    auth.logout()
    auth.login("admin")
    assert "InternalServerError" in client.get(f"/generate/runs/{run_id}").get_data(as_text=True)
    assert "InternalServerError" in client.get(f"/jobs/api/{job_id}").get_json()["error"]
