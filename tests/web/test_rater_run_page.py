"""The rater's launch lands on its run page, as the judge's does: the run's settings, live job row, ratings and usage."""
from __future__ import annotations

import re

from sqlalchemy import select

from app.extensions import db
from app.models import Study
from app.services.judge import save_settings
from app.services.rater import current_rater_prompt
from tests.support.jobs import wait_for_job


def steady_rater(body) -> str:
    return "Rating: [[4]]"


STUB_POLICY = steady_rater


def test_launching_a_rater_run_lands_on_its_run_page(demo, stub, workers, client, auth):
    with demo.app_context():
        save_settings(base_url=stub.base_url, api_key="sk-rater-test-0123456789")
        study = db.session.scalars(select(Study)).one()
        study_id, study_name, prompt = study.id, study.name, current_rater_prompt()
        prompt_id, prompt_name = prompt.id, f"{prompt.name} v{prompt.version}"
    auth.login("researcher")
    form = {"csrf_token": auth.token(), "study_id": str(study_id), "rater_model": "rater-model-x",
            "prompt_id": str(prompt_id), "temperature": "0", "concurrency": "2", "budget_usd": "",
            "launch": "Rate every answer"}
    response = client.post("/judge/rater", data=form)
    assert response.status_code == 302
    match = re.fullmatch(r"/judge/rater/runs/(\d+)", response.headers["Location"])
    assert match, response.headers["Location"]
    job_id = int(match.group(1))
    done = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=60)
    assert done.status == "done", done.error

    page = client.get(f"/judge/rater/runs/{job_id}").get_data(as_text=True)
    assert f"Rater run #{job_id}: rater-model-x" in page and study_name in page and prompt_name in page
    assert f'data-job-id="{job_id}"' in page  # the live job row the judge's run page has too
    assert 'href="/judge/rater"' in page and 'aria-current="page">LLM rater' in page
    answers = done.result["answers"]
    assert re.search(rf'data-metric="rated">{answers} <small class="muted">of {answers} answers', page)
    assert re.search(r'data-metric="api_calls">\d+<', page) and 'data-metric="cost"' in page
    assert page.count('<tr data-system="') >= 2 and ">4.00<" in page  # every answer was rated 4
    assert f"/results/agreement?study={study_id}" in page

    # Launching the same run again lands on the run that already exists.
    again = client.post("/judge/rater", data={**form, "csrf_token": auth.token()})
    assert again.status_code == 302 and again.headers["Location"] == f"/judge/rater/runs/{job_id}"
    # The runs list links each run to its page; another kind of job has no rater page.
    assert f'href="/judge/rater/runs/{job_id}"' in client.get("/judge/rater").get_data(as_text=True)
    assert client.get(f"/judge/rater/runs/{job_id + 1000}").status_code == 404
