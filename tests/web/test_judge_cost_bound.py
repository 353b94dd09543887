"""A judge job whose earlier attempt died with calls in flight reports its cost as an upper bound, everywhere.

The crash is reproduced with the job's own usage ledger: a call is reserved (committed) and its worker
never settles it, exactly what a killed worker leaves (tests/services/test_faults_judge.py does it with kill -9).
"""
from __future__ import annotations

import json
import re

import pytest

from app.core.llm.batch import Call, Reservation
from app.extensions import db
from app.models import Job
from app.services.jobs.usage import JobUsageLedger, previous_usage
from app.services.jobs.worker import start_workers
from app.services.judge import save_settings
from tests.web import test_judge as judging
from tests.support.judge_data import marker_judge

# The judge's fixtures (tests/web/test_judge.py), used here by name.
judge_app = judging.judge_app
no_openai_environment = judging.no_openai_environment
start, wait = judging.start, judging.wait

STUB_POLICY = marker_judge
MODEL = "judge-test"
PER_CALL_USD = 0.25  # the stub's usage (100, 50) at 2000 / 1000 USD per million tokens
LOST_CALL_USD = 1.5  # what the dead attempt's unanswered call was reserved at


@pytest.fixture
def priced(judge_app, stub):
    stub.usage = (100, 50)
    with judge_app.app_context():
        save_settings(prices_json=json.dumps({MODEL: [2000, 1000]}))
    return judge_app


def _crashed_attempt(app, job_id: int) -> None:
    """What a worker killed mid-call leaves: one call counted at its reservation, never settled."""
    with app.app_context():
        ledger = JobUsageLedger(job_id, previous_usage(db.session.get(Job, job_id)))
        ledger.reserve(Call("lost", [{"role": "user", "content": "x"}]), Reservation(3000, 2048, LOST_CALL_USD))


def _finish(app, job_id: int) -> Job:
    consumer = start_workers(app, 1)
    try:
        return wait(app, job_id)
    finally:
        consumer.stop(graceful=True)


def test_a_cost_with_an_unsettled_reservation_is_labelled_an_upper_bound(priced, stub, client, auth):
    crashed = start(priced, model=MODEL, concurrency=1)
    _crashed_attempt(priced, crashed)
    done = _finish(priced, crashed)
    assert done.result["reserved_calls"] == 1
    assert done.result["cost_usd"] == pytest.approx(LOST_CALL_USD + 12 * PER_CALL_USD)  # 4.5, of 3.0 spent
    assert done.result["cost_usd_is_upper_bound"] is True

    auth.login("researcher")
    api = client.get(f"/jobs/api/{crashed}").get_json()
    assert api["result"]["cost_usd_is_upper_bound"] is True
    page = client.get(f"/judge/runs/{crashed}").get_data(as_text=True)
    assert re.search(r'data-metric="cost">at most \$4\.5000<', page)
    assert 'data-field="upper-bound-note"' in page and "1 calls whose replies never arrived" in page
    listing = client.get("/judge/").get_data(as_text=True)
    assert re.search(r'data-field="cost">at most \$4\.5000<', listing)


def test_a_cost_whose_every_call_settled_is_exact(priced, stub, client, auth):
    job_id = start(priced, model=MODEL, concurrency=1)
    done = _finish(priced, job_id)
    assert done.result["reserved_calls"] == 0 and done.result["cost_usd_is_upper_bound"] is False
    auth.login("researcher")
    page = client.get(f"/judge/runs/{job_id}").get_data(as_text=True)
    assert re.search(r'data-metric="cost">\$3\.0000<', page) and "upper-bound-note" not in page
    assert client.get(f"/jobs/api/{job_id}").get_json()["result"]["cost_usd_is_upper_bound"] is False
