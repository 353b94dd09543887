"""Generation pages: launch through the job queue, run page, download, compare, prompt versions."""
from __future__ import annotations

import html
import json
import re

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import GenerationPrompt, GenerationRun, Job
from tests.support.jobs import wait_for_job

STUB_POLICY = lambda body: "A generated answer."  # noqa: E731


@pytest.fixture(autouse=True)
def _estimate_tokens(monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")


PAGE_KEY = "sk-page-key-0123456789abc"


def configure_endpoint(app, server, name: str = "lab", key: str = PAGE_KEY) -> str:
    """Save an endpoint for the stub as an admin would (Generate → Endpoints); return its name."""
    from app.services.llm import endpoints

    with app.app_context():
        endpoints.save(name, base_url=server.base_url, api_key=key, may_change=True)
    return name


def form(app, auth, stub, **changes):
    data = {"csrf_token": auth.token(), "endpoint": configure_endpoint(app, stub),
            "model": "page-model", "question_set": "human_eval", "system_name": "", "context_tokens": "16000",
            "max_tokens": "512", "temperature": "0.0001", "seed": "", "truncation": "leval", "prompt_id": "1",
            "concurrency": "4", "budget_usd": ""}
    data.update(changes)
    return data


def test_staff_only(demo, client, auth):
    auth.login("annotator")
    assert client.get("/generate/").status_code == 403
    assert client.get("/author/").status_code == 403


def test_dry_run_then_launch_then_download(demo, client, auth, stub, workers):
    auth.login("researcher")
    page = client.post("/generate/", data=form(demo, auth, stub, estimate="Estimate (dry run)"))
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "Dry run: 10 questions" in text and stub.calls == 0
    assert "sk-page-key" not in text
    listed = client.get("/generate/endpoints").get_data(as_text=True)
    assert "sk-page-key" not in listed and "sk-…9abc" in listed  # the key is shown masked only
    response = client.post("/generate/", data=form(demo, auth, stub, launch="Start"))
    assert response.status_code == 302
    with demo.app_context():
        run = db.session.scalars(select(GenerationRun)).one()
        run_id, job_id = run.id, run.job_id
        assert "sk-page-key" not in json.dumps(db.session.get(Job, job_id).params)
    job = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=30)
    assert job.status == "done", job.error
    assert job.result["answered"] == 10 and job.result["api_calls"] == 10
    assert {r.authorization for r in stub.requests} == {"Bearer sk-page-key-0123456789abc"}
    page = client.get(f"/generate/runs/{run_id}").get_data(as_text=True)
    assert "model.reported" in page and "page-model" in page and "No document was cut" in page
    download = client.get(f"/generate/runs/{run_id}/download")
    assert download.headers["Content-Disposition"] == ("attachment; filename=page-model-16k.pred.jsonl; "
                                                       "filename*=UTF-8''page-model-16k.pred.jsonl")
    rows = [json.loads(line) for line in download.get_data(as_text=True).splitlines()]
    assert len(rows) == 10 and list(rows[0]) == ["query", "gt", "prompt", "page-model-16k_pred", "evaluation"]
    metrics = wait_for_job(demo, job.result["metrics_job"], lambda j: j.status in ("done", "failed"), timeout=30)
    assert metrics.status == "done"
    again = client.post("/generate/", data=form(demo, auth, stub, launch="Start"), follow_redirects=True)
    assert "already exists" in again.get_data(as_text=True)


def test_compare_says_what_differs(demo, client, auth, runner, stub):
    for args in ([], ["--length-instruction", "--seed", "3"]):
        result = runner.invoke(args=["generate", "--base-url", stub.base_url, "--model", "m", "--json", *args])
        assert result.exit_code == 0, result.output
    auth.login("researcher")
    page = client.get("/generate/compare?a=1&b=2").get_data(as_text=True)
    assert "2 manifest fields differ" in page
    for name in ("decoding.seed", "length_instruction"):
        assert f'data-field="{name}"' in page
    assert 'data-field="model.requested"' not in page and 'data-field="questions.fingerprint"' not in page
    same = client.get("/generate/compare?a=1&b=1").get_data(as_text=True)
    assert "The manifests are identical" in same
    assert client.get("/generate/compare?a=1&b=x").status_code == 400
    assert client.get("/generate/compare?a=1&b=99").status_code == 404


def test_editing_a_prompt_saves_a_new_version(demo, client, auth):
    auth.login("researcher")
    assert client.get("/generate/prompts").status_code == 200
    page = client.get("/generate/prompts/1").get_data(as_text=True)
    assert "Document is as follows. {document} Instruction: {instruction} Output: " in page
    from app.core.generation.prompts import LEVAL_SYSTEMS, LEVAL_TEMPLATES

    data = {"csrf_token": auth.token(), **{f"system-{k}": v for k, v in LEVAL_SYSTEMS.items()},
            **{f"template-{k}": v for k, v in LEVAL_TEMPLATES.items()}}
    data["template-open"] = "Read {document}\nthen do: {instruction}"
    response = client.post("/generate/prompts/1", data=data)
    assert response.status_code == 302
    data["template-exam"] = "no placeholders"
    bad = client.post("/generate/prompts/1", data=data, follow_redirects=True).get_data(as_text=True)
    assert "template &#39;exam&#39; must contain {document} exactly once" in bad
    with demo.app_context():
        versions = db.session.scalars(select(GenerationPrompt).order_by(GenerationPrompt.version)).all()
        assert [v.version for v in versions] == [1, 2]
        assert versions[1].content["templates"]["open"] == "Read {document}\nthen do: {instruction}"
        assert versions[0].content["templates"]["open"] == LEVAL_TEMPLATES["open"]


def test_cancel_then_resume_repeats_no_stored_call(demo, client, auth, workers):
    from app.services.jobs import cancel_job, resume_job
    from tests.support.openai_stub import StubOpenAIServer

    with StubOpenAIServer(policy=lambda body: "Slow answer.", latency_s=0.2) as slow:
        auth.login("researcher")
        client.post("/generate/", data=form(demo, auth, slow, launch="Start", concurrency="1"))
        with demo.app_context():
            job_id = db.session.scalars(select(GenerationRun)).one().job_id
        wait_for_job(demo, job_id, lambda j: j.done >= 2, timeout=30, what="two answers")
        with demo.app_context():
            cancel_job(db.session.get(Job, job_id))
        job = wait_for_job(demo, job_id, lambda j: j.status == "cancelled", timeout=30)
        assert 2 <= job.done < 10
        with demo.app_context():
            resume_job(db.session.get(Job, job_id))
        job = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=30)
        assert job.status == "done" and job.result["answered"] == 10
        bodies = [json.dumps(r.body["messages"]) for r in slow.requests]
        assert len(set(bodies)) == len(bodies) == 10, "a call was made twice"


@pytest.mark.parametrize("field, value, message", [
    ("model", "page\x00model", "Model contains a NUL character (\\u0000)"),
    ("model", "m" * 201, "Model is 201 characters long; at most 200 are allowed."),
    ("system_name", "page\x00system", "Store as system contains a NUL character (\\u0000)"),
    ("system_name", "s" * 121, "Store as system is 121 characters long; at most 120 are allowed."),
])
def test_the_launch_form_refuses_text_the_database_cannot_store(demo, client, auth, stub, field, value, message):
    from app.models import Setting

    auth.login("researcher")
    data = form(demo, auth, stub, launch="Start", **{field: value})
    with demo.app_context():
        settings_before = {row.key: row.value for row in db.session.scalars(select(Setting))}
        jobs = db.session.scalar(select(func.count(Job.id)))
    response = client.post("/generate/", data=data)
    page = response.get_data(as_text=True)
    assert response.status_code == 200 and message in page and "Check the highlighted fields." in page
    with demo.app_context():
        assert db.session.scalar(select(func.count(GenerationRun.id))) == 0
        assert db.session.scalar(select(func.count(Job.id))) == jobs
        assert {row.key: row.value for row in db.session.scalars(select(Setting))} == settings_before


@pytest.mark.parametrize("field, message", [
    ("system-open", "system message &#39;open&#39; contains a NUL character (\\u0000)"),
    ("template-open", "template &#39;open&#39; contains a NUL character (\\u0000)"),
])
def test_a_prompt_edit_with_a_nul_character_is_refused_and_no_version_is_saved(demo, client, auth, field, message):
    from app.core.generation.prompts import LEVAL_SYSTEMS, LEVAL_TEMPLATES

    auth.login("researcher")
    data = {"csrf_token": auth.token(), **{f"system-{k}": v for k, v in LEVAL_SYSTEMS.items()},
            **{f"template-{k}": v for k, v in LEVAL_TEMPLATES.items()}}
    data[field] += "\x00"
    page = client.post("/generate/prompts/1", data=data).get_data(as_text=True)
    assert message in page
    with demo.app_context():
        assert [p.version for p in db.session.scalars(select(GenerationPrompt))] == [1]


def test_what_was_cut_names_documents_by_title(demo, client, auth, runner, stub):
    """First-hour finding 21: the run page's "What was cut" names each document by its title, not its number."""
    from app.models import Document

    result = runner.invoke(args=["generate", "--base-url", stub.base_url, "--model", "m", "--context-tokens", "900",
                                 "--max-tokens", "64", "--json"])
    assert result.exit_code == 0, result.output
    with demo.app_context():
        run = db.session.scalars(select(GenerationRun)).one()
        cut_ids = [cut["document"] for cut in run.manifest["truncated_documents"]]
        titles = {doc.id: doc.title for doc in db.session.scalars(select(Document).where(Document.id.in_(cut_ids)))}
    assert cut_ids and all(titles.values())
    auth.login("researcher")
    page = client.get(f"/generate/runs/{run.id}").get_data(as_text=True)
    named = re.findall(r'data-field="cut-document">([^<]*)<', page)
    assert named == [html.escape(titles[key]) for key in cut_ids]
