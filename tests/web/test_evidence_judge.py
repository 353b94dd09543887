"""The pairwise judge's `evidence` profile end to end against the stub LLM: the document in the prompt, scripted
replies with genuine and invented quotes, the checked quotes stored with the side they are about, the shares and
flags on the run page (and the switch that leaves flagged judgments out of the win rate), and a re-run without a
call."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from app.core.evidence import is_flagged
from app.extensions import db
from app.models import Document, LLMJudgment, Prediction, System
from app.services.judge import RunSpec, dry_run, launch, save_settings
from app.services.judge.prompt_versions import ensure_profile_prompt
from tests.support.evidence_replies import judge_kind, judge_reply
from tests.support.jobs import wait_for_job

STUB_POLICY = judge_reply
MODEL = "evidence-test"


def two_systems() -> tuple[str, str]:
    """Two demo systems of its study (the fewest answers, a fast run), whose documents are long meeting minutes."""
    counts = db.session.execute(select(System.name, func.count(Prediction.id)).join(Prediction)
                                .group_by(System.name).order_by(func.count(Prediction.id), System.name)).all()
    return counts[0][0], counts[1][0]


def shown_field(page: str, field: str) -> str:
    return re.search(rf'data-field="{field}">([^<]+)<', page).group(1).strip()


def test_an_evidence_judge_run_quotes_the_document_and_its_page_reports_the_quotes(demo, stub, workers, client,
                                                                                   auth, monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    with demo.app_context():
        save_settings(base_url=stub.base_url, api_key="sk-judge-evidence-0123456789")
        system, baseline = two_systems()
        spec = RunSpec(system, baseline, MODEL, ensure_profile_prompt("evidence").id, 0.0, "all", "evidence")
        estimate = dry_run(spec)
        plain = dry_run(RunSpec(system, baseline, MODEL, ensure_profile_prompt("default").id, 0.0, "all"))
        assert estimate["prompt_tokens_est"] > plain["prompt_tokens_est"] + estimate["calls"] * 500
        assert estimate["truncation"]["documents"] >= 1
        job_id = launch(spec, concurrency=2, budget_usd=None).id
    job = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=90)
    assert job.status == "done", job.error
    calls = stub.calls
    assert calls == job.result["api_calls"] > 0
    with demo.app_context():
        documents = [d.text for d in db.session.scalars(select(Document))]
        for request in stub.requests:
            assert any(text[:200] in request.body["messages"][1]["content"] for text in documents)
            assert request.body["response_format"]["json_schema"]["name"] == "evidence_verdict"
        rows = list(db.session.scalars(select(LLMJudgment).where(LLMJudgment.verdict.is_not(None))))
        assert rows and all(row.evidence is not None for row in rows if "no call" not in row.raw_reply)
        flagged = sum(is_flagged(row.evidence["quotes"]) for row in rows if row.evidence)
        assert flagged > 0
        for row in rows:
            for quote in (row.evidence or {}).get("quotes", []):
                assert quote["side"] == ("system" if (row.order == "AB") == (quote["answer"] == "A") else "baseline")
    auth.login("researcher")
    page = client.get(f"/judge/runs/{job_id}").get_data(as_text=True)
    assert shown_field(page, "scope") == "Every number on this page: flagged judgments included"
    assert job.result["schema_fallbacks"] == 0 and 'data-field="schema-refused"' not in page
    assert int(shown_field(page, "decisions")) == len(rows)
    assert f'data-system="{system}"' in page and f'data-system="{baseline}"' in page
    assert page.count('data-status="unsupported"') > 0 and page.count('data-status="exact"') > 0
    wins_in = re.search(r'data-metric="wins">(\d+)<', page).group(1)
    out = client.get(f"/judge/runs/{job_id}?flagged=out").get_data(as_text=True)
    assert shown_field(out, "scope") == "Every number on this page: flagged judgments left out"
    assert int(shown_field(out, "decisions")) == len(rows) - flagged
    counted = sum(int(re.search(rf'data-metric="{m}">(\d+)<', out).group(1)) for m in ("wins", "losses", "ties"))
    assert counted == len(rows) - flagged and wins_in.isdigit()
    # The drill-down of one judgment: its quotes with their status, the located ones as spans of the pane's text.
    row = next(r for r in rows if r.evidence and any(q["status"] == "exact" for q in r.evidence["quotes"]))
    drill = client.get(f"/judge/runs/{job_id}/quotes?question={row.question_id}&order={row.order}")
    text = drill.get_data(as_text=True)
    assert drill.status_code == 200 and 'id="doc-panel"' in text
    assert text.count("data-status=") == len(row.evidence["quotes"]) and "Assistant A: " in text
    assert client.get(f"/judge/runs/{job_id}/quotes?question={row.question_id}&order=XY").status_code == 404
    assert client.get(f"/judge/runs/{job_id}/quotes").status_code == 404
    # A re-run makes no call: every judgment is cached under its document's fingerprint.
    with demo.app_context():
        again = launch(spec, concurrency=4, budget_usd=None).id
    rerun = wait_for_job(demo, again, lambda j: j.status in ("done", "failed"), timeout=60)
    assert rerun.status == "done" and rerun.result["api_calls"] == 0 and stub.calls == calls


def test_the_judge_cache_key_holds_the_documents_fingerprint():
    from app.core.judge.cache import pair_key
    from app.core.judge.prompt import PairItem

    item = PairItem(1, "q", "r", "a", "b")
    assert pair_key("m", "p", item, "AB", 0.0) == pair_key("m", "p", PairItem(1, "q", "r", "a", "b", "", ""), "AB", 0.0)
    with_document = PairItem(1, "q", "r", "a", "b", "text", "sha-1:cut-1")
    other_document = PairItem(1, "q", "r", "a", "b", "text", "sha-2:cut-1")
    keys = {pair_key("m", "p", i, "AB", 0.0) for i in (item, with_document, other_document)}
    assert len(keys) == 3
    assert judge_kind("a", "b") in (0, 1, 2)


pytestmark = pytest.mark.filterwarnings("ignore")


def test_the_run_page_says_when_the_server_refused_the_schema_and_the_text_format_was_read(demo, stub, workers,
                                                                                         client, auth, monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    stub.refuse_response_format = True  # 400 to any request with response_format, as some servers answer
    with demo.app_context():
        save_settings(base_url=stub.base_url, api_key="sk-judge-evidence-0123456789")
        system, baseline = two_systems()
        spec = RunSpec(system, baseline, MODEL, ensure_profile_prompt("evidence").id, 0.0, "all", "evidence")
        job_id = launch(spec, concurrency=2, budget_usd=None).id
    job = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=90)
    assert job.status == "done", job.error
    refused = [r for r in stub.requests if r.status == 400]
    assert refused and all("response_format" in r.body for r in refused)
    assert job.result["schema_fallbacks"] == len(refused) == job.result["api_calls"]
    with demo.app_context():  # the replies in the text format were read, quotes and all
        rows = list(db.session.scalars(select(LLMJudgment).where(LLMJudgment.verdict.is_not(None))))
        assert rows and any(row.evidence and row.evidence["quotes"] for row in rows)
    auth.login("researcher")
    page = client.get(f"/judge/runs/{job_id}").get_data(as_text=True)
    note = re.search(r'data-field="schema-refused">(.*?)</p>', page, re.DOTALL).group(1)
    assert (f"The server refused <code>response_format</code> (the JSON schema) on {len(refused)} calls (HTTP 400): "
            "each was sent again without it, and its reply was read in the text format") in note
