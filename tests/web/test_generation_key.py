"""Generation's endpoints and keys follow the judge's rules (hardening finding 1).

Only admins set a base URL or a key; a researcher picks one of the configured endpoints, and a
key goes only to the origin it was entered for. A dry run stores nothing.
"""
from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import GenerationRun, Job, Setting
from app.services.llm import endpoints
from tests.support.jobs import wait_for_job
from tests.support.openai_stub import StubOpenAIServer

ADMIN_KEY = "sk-admins-generation-KEY-0123456789"
STUB_POLICY = lambda body: "An answer."  # noqa: E731


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def thief():
    """A researcher's own server on 127.0.0.1 (another port: another origin)."""
    with StubOpenAIServer(policy=lambda body: "stolen") as server:
        yield server


def all_settings(app) -> dict[str, str]:
    with app.app_context():
        return {row.key: row.value for row in db.session.scalars(select(Setting))}


def launch_form(auth, **fields) -> dict:
    data = {"csrf_token": auth.token(), "model": "m", "question_set": "human_eval", "system_name": "",
            "context_tokens": "16000", "max_tokens": "64", "temperature": "0", "seed": "", "truncation": "leval",
            "prompt_id": "1", "concurrency": "2", "budget_usd": ""}
    data.update(fields)
    return data


def admin_saves_endpoint(client, auth, name, base_url, key=""):
    auth.login("admin")
    response = client.post("/generate/endpoints", data={"csrf_token": auth.token(), "name": name,
                                                        "base_url": base_url, "api_key": key, "save": "Save endpoint"})
    auth.logout()
    return response


def test_a_researcher_cannot_send_the_admins_key_to_their_own_server(demo, client, auth, stub, thief, workers):
    assert admin_saves_endpoint(client, auth, "lab", stub.base_url, ADMIN_KEY).status_code == 302
    auth.login("researcher")
    # The old attack: the researcher's base URL and an empty key field. The form has no such field now;
    # whatever is posted, the run goes to the endpoint's own address.
    response = client.post("/generate/", data=launch_form(auth, endpoint="lab", base_url=thief.base_url, api_key="",
                                                          launch="Start"))
    assert response.status_code == 302
    with demo.app_context():
        run = db.session.scalars(select(GenerationRun)).one()
        assert run.spec["base_url"] == stub.base_url and run.spec["endpoint"] == "lab"
        job_id = run.job_id
    job = wait_for_job(demo, job_id, lambda j: j.status in ("done", "failed"), timeout=30)
    assert job.status == "done", job.error
    assert thief.calls == 0
    assert stub.requests and {r.authorization for r in stub.requests} == {f"Bearer {ADMIN_KEY}"}


def test_an_endpoint_no_admin_configured_is_refused(demo, client, auth, thief):
    auth.login("researcher")
    page = client.post("/generate/", data=launch_form(auth, endpoint="mine", launch="Start")).get_data(as_text=True)
    assert "Not a valid choice" in page
    with demo.app_context():
        assert db.session.scalar(select(GenerationRun.id)) is None and db.session.scalar(select(Job.id)) is None
    assert thief.calls == 0


def test_a_researchers_dry_run_with_a_key_changes_nothing_stored(demo, client, auth, stub):
    admin_saves_endpoint(client, auth, "lab", stub.base_url, ADMIN_KEY)
    before = all_settings(demo)
    auth.login("researcher")
    page = client.post("/generate/", data=launch_form(auth, endpoint="lab", api_key="sk-researchers-own-key-000",
                                                      estimate="Estimate (dry run)"))
    assert page.status_code == 200 and "Dry run:" in page.get_data(as_text=True)
    assert all_settings(demo) == before
    with demo.app_context():
        assert endpoints.load("lab").api_key == ADMIN_KEY


def test_only_admins_add_or_change_endpoints(demo, client, auth, stub, thief):
    admin_saves_endpoint(client, auth, "lab", stub.base_url, ADMIN_KEY)
    before = all_settings(demo)
    auth.login("researcher")
    page = client.get("/generate/endpoints").get_data(as_text=True)
    assert 'name="base_url"' not in page and ADMIN_KEY not in page
    for fields in ({"name": "lab", "base_url": thief.base_url, "api_key": ""},
                   {"name": "lab", "base_url": stub.base_url, "api_key": "sk-researchers-own-key-000"},
                   {"name": "mine", "base_url": thief.base_url, "api_key": ""},
                   {"name": "lab", "base_url": stub.base_url, "remove": "Remove endpoint"}):
        response = client.post("/generate/endpoints", data={"csrf_token": auth.token(), "save": "Save", **fields})
        assert response.status_code == 403
    assert all_settings(demo) == before


def test_changing_an_endpoints_url_drops_its_key_unless_one_is_entered(demo, client, auth, stub, thief):
    admin_saves_endpoint(client, auth, "lab", stub.base_url, ADMIN_KEY)
    auth.login("admin")
    page = client.post("/generate/endpoints", data={"csrf_token": auth.token(), "name": "lab",
                                                    "base_url": thief.base_url, "api_key": "", "save": "Save"},
                       follow_redirects=True).get_data(as_text=True)
    assert "key was removed because the base URL changed" in page
    with demo.app_context():
        moved = endpoints.load("lab")
        assert moved.base_url == thief.base_url and moved.api_key == ""
    client.post("/generate/endpoints", data={"csrf_token": auth.token(), "name": "lab", "base_url": thief.base_url,
                                             "api_key": "sk-for-the-new-host-12345", "save": "Save"})
    with demo.app_context():
        assert endpoints.load("lab").api_key == "sk-for-the-new-host-12345"


def test_a_queued_run_whose_endpoint_moved_calls_nobody(demo, client, auth, stub, thief, workers):
    """An admin re-points an endpoint after a run was queued: the run fails instead of following it."""
    admin_saves_endpoint(client, auth, "lab", stub.base_url, ADMIN_KEY)
    with demo.app_context():
        from app.services.generation.spec import RunSpec, client_for

        spec = RunSpec(endpoint="lab", base_url=stub.base_url, model="m", question_set="human_eval", system_name="s")
        endpoints.save("lab", base_url=thief.base_url, api_key="sk-thief-host-key-0000", may_change=True)
        with pytest.raises(endpoints.UnknownEndpoint, match="points elsewhere"):
            client_for(spec)


def test_the_environment_key_goes_only_to_the_environments_address(demo, monkeypatch, stub, thief):
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-environment-KEY-0123456789")
    with demo.app_context():
        assert endpoints.adhoc(stub.base_url).api_key == "sk-environment-KEY-0123456789"
        assert endpoints.adhoc(thief.base_url).api_key == ""
        client = endpoints.adhoc(thief.base_url).client()
    try:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    except Exception:  # noqa: BLE001 - only what the server received matters
        pass
    assert thief.requests and all("sk-environment" not in (r.authorization or "") for r in thief.requests)
