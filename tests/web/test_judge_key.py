"""The judge's API key: only admins change the endpoint or the key, and the key goes only where it was entered for."""
from __future__ import annotations

import json

import pytest

from app.extensions import db
from app.models import Setting
from app.services.judge import load_settings, save_settings
from app.services.judge.settings import EndpointChangeNotAllowed, endpoint_origin
from tests.support.openai_stub import StubOpenAIServer

KEY = "sk-admins-judge-KEY-0123456789abcdef"
ENV_KEY = "sk-environment-KEY-0123456789abcdef"


@pytest.fixture(autouse=True)
def no_openai_environment(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def thief():
    """Another server on 127.0.0.1 (another port: another endpoint), as a researcher would name."""
    with StubOpenAIServer() as server:
        yield server


def form(token: str, **fields) -> dict:
    data = {"csrf_token": token, "model": "gpt-4", "baseline": "", "max_retries": "0", "timeout_s": "5",
            "prices": json.dumps({"gpt-4": [30, 60]})}
    data.update(fields)
    return data


def one_call(app) -> None:
    """Make one request with the effective settings, as a judge run does."""
    with app.app_context():
        client = load_settings().client()
    try:
        client.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": "[[A]]"}])
    except Exception:  # noqa: BLE001 - only what the server received matters here
        pass


def test_changing_only_the_base_url_removes_the_saved_key(app, stub, thief, client, auth):
    auth.login("admin")
    assert client.post("/judge/settings", data=form(auth.token(), base_url=stub.base_url, api_key=KEY)).status_code == 302
    one_call(app)
    assert stub.requests[-1].authorization == f"Bearer {KEY}"
    response = client.post("/judge/settings", data=form(auth.token(), base_url=thief.base_url, api_key=""),
                           follow_redirects=True)
    assert "The saved API key was removed because the base URL changed" in response.get_data(as_text=True)
    with app.app_context():
        assert load_settings().api_key == ""
        assert db.session.get(Setting, "judge.api_key").value == ""
    one_call(app)
    assert thief.requests and all(KEY not in (r.authorization or "") for r in thief.requests)


def test_a_key_entered_with_the_new_base_url_is_kept(app, stub, thief, client, auth):
    auth.login("admin")
    client.post("/judge/settings", data=form(auth.token(), base_url=stub.base_url, api_key=KEY))
    client.post("/judge/settings", data=form(auth.token(), base_url=thief.base_url, api_key="sk-for-the-new-host-1234"))
    one_call(app)
    assert thief.requests[-1].authorization == "Bearer sk-for-the-new-host-1234"
    # Saving other fields with the same base URL keeps the key.
    client.post("/judge/settings", data=form(auth.token(), base_url=thief.base_url, api_key="", max_retries="1"))
    with app.app_context():
        assert load_settings().api_key == "sk-for-the-new-host-1234"


def test_only_admins_change_the_base_url_or_the_key(app, stub, thief, client, auth):
    with app.app_context():
        save_settings(base_url=stub.base_url, api_key=KEY)
    auth.login("researcher")
    page = client.get("/judge/settings").get_data(as_text=True)
    assert 'name="base_url"' not in page and 'name="api_key"' not in page
    assert "Only an admin may change the base URL or the API key." in page
    for fields in ({"base_url": thief.base_url}, {"base_url": stub.base_url, "api_key": "sk-researchers-own-1234"},
                   {"base_url": stub.base_url, "clear_api_key": "y"}):
        response = client.post("/judge/settings", data=form(auth.token(), **fields))
        assert response.status_code == 403, fields
        assert "Only an admin may change the base URL or the API key." in response.get_data(as_text=True)
    with app.app_context():
        settings = load_settings()
        assert (settings.base_url, settings.api_key, settings.max_retries) == (stub.base_url, KEY, 5)
    # Other settings stay theirs to change (the endpoint fields are not on their form).
    assert client.post("/judge/settings", data=form(auth.token(), max_retries="3")).status_code == 302
    with app.app_context():
        settings = load_settings()
        assert (settings.base_url, settings.api_key, settings.max_retries) == (stub.base_url, KEY, 3)
        with pytest.raises(EndpointChangeNotAllowed):
            save_settings(base_url=thief.base_url, may_change_endpoint=False)


def test_a_saved_key_is_never_sent_to_another_host(app, stub, thief):
    """Even if the base URL row changes behind the form's back, the key stays with its endpoint."""
    with app.app_context():
        save_settings(base_url=stub.base_url, api_key=KEY)
        db.session.get(Setting, "judge.base_url").value = thief.base_url
        db.session.commit()
        settings = load_settings()
        assert settings.api_key == "" and settings.key_withheld_for == endpoint_origin(stub.base_url)
    one_call(app)
    assert thief.requests and all(KEY not in (r.authorization or "") for r in thief.requests)


def test_the_environment_key_only_goes_to_the_environment_endpoint(app, stub, thief, client, auth, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    one_call(app)
    assert stub.requests[-1].authorization == f"Bearer {ENV_KEY}"
    auth.login("admin")
    client.post("/judge/settings", data=form(auth.token(), base_url=thief.base_url))
    page = client.get("/judge/settings").get_data(as_text=True)
    assert "it is not sent to this base URL" in page and ENV_KEY not in page
    one_call(app)
    assert thief.requests and all(ENV_KEY not in (r.authorization or "") for r in thief.requests)


def test_origins_compare_scheme_host_and_port():
    assert endpoint_origin("") == endpoint_origin("https://API.openai.com:443/v1") == "https://api.openai.com:443"
    assert endpoint_origin("http://127.0.0.1:8000/v1") != endpoint_origin("http://127.0.0.1:8001/v1")
    assert endpoint_origin("http://host/v1") != endpoint_origin("https://host/v1")
    assert endpoint_origin("http://user@evil.example/v1") == "http://evil.example:80"


@pytest.mark.parametrize("field", ["model", "baseline", "base_url", "api_key"])
def test_settings_with_a_nul_character_are_refused_naming_the_field(app, client, auth, field):
    auth.login("admin")
    value = {"base_url": "http://127.0.0.1:9/v1\x00", "api_key": "sk-\x00"}.get(field, "gpt\x00-4")
    response = client.post("/judge/settings", data=form(auth.token(), **{field: value}))
    assert response.status_code == 400
    label = {"base_url": "base URL", "api_key": "API key"}.get(field, field)
    assert f"{label} contains a NUL character" in response.get_data(as_text=True)
    with app.app_context():
        assert all("\x00" not in s.value for s in db.session.scalars(db.select(Setting)))
