"""The judge's `evidence` options from its launch form (quotes per answer, the judge's context, the JSON switch)
reach the prompts the stub LLM receives; and every page that shows the run's win rate (the judge's runs, the
Leaderboard, Table 2, the results' metric columns) says that its flagged judgments are included."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from app.core.evidence import is_flagged
from app.extensions import db
from app.models import Document, Job, LLMJudgment
from app.services.judge import RunSpec, save_settings
from app.services.judge.pairs import system_named
from app.services.judge.prompt_versions import ensure_profile_prompt
from app.services.metrics import score_system
from app.services.results.judge_rates import load_win_rates
from app.services.results.metric_values import judge_columns
from tests.support.evidence_replies import judge_reply
from tests.support.jobs import wait_for_job
from tests.support.scoring_data import generate_scores
from tests.web.test_evidence_judge import two_systems

STUB_POLICY = judge_reply
MODEL = "evidence-options-test"  # unknown to tiktoken: tokens are counted by the documented estimate
CONTEXT = 5000  # far below the default 128,000: the demo's long documents are cut
NOTE = "flagged judgments included"


@pytest.fixture
def options_run(demo, stub, workers, client, auth, monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    with demo.app_context():
        save_settings(base_url=stub.base_url, api_key="sk-judge-options-0123456789")
        system, baseline = two_systems()
        for name in (system, baseline):  # Table 2 shows systems with metric aggregates
            score_system(system_named(name).id, profiles=("official",))
        generate_scores(["ann1", "ann2", "ann3"], seed=5)  # the correlation page lists columns beside human scores
        prompt_id = ensure_profile_prompt("evidence").id
    auth.login("researcher")
    form = {"csrf_token": auth.token(), "system": system, "baseline": baseline, "scope": "human_eval",
            "judge_model": MODEL, "profile": "evidence", "prompt_id": str(prompt_id), "max_quotes": "1",
            "context_tokens": str(CONTEXT), "temperature": "0", "concurrency": "2", "budget_usd": ""}
    # json_schema left unticked: the form's switch off.
    response = client.post("/judge/", data={**form, "launch": "Launch"})
    assert response.status_code == 302, response.get_data(as_text=True)
    with demo.app_context():
        job_id = db.session.scalar(select(func.max(Job.id)))
    job = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=90)
    assert job.status == "done", job.error
    return demo, stub, job, system, baseline


def test_the_judge_forms_evidence_options_shape_the_prompts_and_flagged_judgments_are_named(options_run, client):
    app, stub, job, system, _ = options_run
    check_the_options_reached_the_prompts(app, stub, job)
    check_every_win_rate_says_flagged_judgments_are_included(app, client, job, system)


def check_the_options_reached_the_prompts(app, stub, job):
    assert job.params["max_quotes"] == 1 and job.params["context_tokens"] == CONTEXT
    assert job.params["json_schema"] is False
    with app.app_context():
        spec = RunSpec.from_params(job.params)
        assert (spec.max_quotes, spec.context_tokens, spec.json_schema) == (1, CONTEXT, False)
        documents = [d.text for d in db.session.scalars(select(Document))]
    assert stub.requests and job.result["truncation"]["context_tokens"] == CONTEXT
    for request in stub.requests:
        system_text, user = (m["content"] for m in request.body["messages"])
        assert "response_format" not in request.body  # the switch off: the text format only
        assert "up to 1 verbatim quotes" in system_text and "up to 3 " not in system_text
        shown = re.search(r"## Document\n(.*?)\n\n## End of the document", user, re.DOTALL).group(1)
        full = next(text for text in documents if text[:200] == shown[:200])
        # The document cut to the smaller context (≈4 characters a token under the estimate): well below it.
        assert len(shown) < min(len(full), CONTEXT * 4)


def check_every_win_rate_says_flagged_judgments_are_included(app, client, job, system):
    with app.app_context():
        rows = list(db.session.scalars(select(LLMJudgment).where(LLMJudgment.job_id == job.id,
                                                                 LLMJudgment.verdict.is_not(None))))
        assert any(row.evidence and is_flagged(row.evidence["quotes"]) for row in rows)
        columns = [c for c in judge_columns(load_win_rates()) if "evidence profile" in c.label]
        assert columns and all(NOTE in column.label for column in columns)
    runs = client.get("/judge/").get_data(as_text=True)
    assert f'data-field="flagged-note">{NOTE}<' in runs
    board = client.get("/leaderboard").get_data(as_text=True)
    assert f'data-field="flagged-note">{NOTE}<' in board
    table = client.get("/results/table2?judge=evidence").get_data(as_text=True)
    assert f'data-field="flagged-note">{NOTE}<' in table and f'data-system="{system}"' in table
    correlation = client.get("/results/correlation").get_data(as_text=True)
    assert NOTE in correlation


pytestmark = pytest.mark.filterwarnings("ignore")
