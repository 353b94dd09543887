"""The token API's endpoints do what the pages do, through the same services: upload (all or nothing, idempotent),
jobs, systems, the Leaderboard, studies and their exports and results."""
from __future__ import annotations

import io
import json

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Prediction, System, UploadBatch
from tests.support.api import make_token
from tests.support.predictions import demo_file, make_zip

QUALITY = "exam_eval/terse-13b/quality.pred.jsonl"
HUMAN = "human_eval/terse-13b.pred.jsonl"


@pytest.fixture
def api(demo):
    client = demo.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = "Bearer " + make_token(demo, "researcher", "write")
    return demo, client


def upload(client, name: str, content: bytes, system: str = ""):
    return client.post("/api/v1/predictions", data={"file": (io.BytesIO(content), name), "system": system},
                       content_type="multipart/form-data")


def stored(app) -> tuple[int, int, int]:
    with app.app_context():
        return tuple(db.session.scalar(select(func.count()).select_from(model))
                     for model in (System, Prediction, UploadBatch))


def test_an_upload_is_imported_whole_and_its_metrics_are_queued(api):
    _, client = api
    answer = upload(client, "alpha.zip", make_zip({"alpha/quality.pred.jsonl": demo_file(QUALITY, "alpha"),
                                                   "alpha.pred.jsonl": demo_file(HUMAN, "alpha")}))
    assert answer.status_code == 201, answer.get_json()
    body = answer.get_json()
    assert [s["name"] for s in body["systems"]] == ["alpha"] and len(body["files"]) == 2
    assert body["predictions"] > 0 and len(body["jobs"]) == 1
    job = client.get(f"/api/v1/jobs/{body['jobs'][0]}").get_json()
    assert job["kind"] == "metrics" and job["state"] in ("queued", "running", "done") and 0 <= job["progress"] <= 1
    systems = client.get("/api/v1/systems").get_json()
    assert "alpha" in [s["name"] for s in systems["items"]] and systems["total"] == len(systems["items"])


def test_the_same_upload_again_changes_nothing(api):
    app, client = api
    content = demo_file(QUALITY, "alpha")
    first = upload(client, "quality.pred.jsonl", content, system="alpha").get_json()
    counts = stored(app)
    again = upload(client, "quality.pred.jsonl", content, system="alpha")
    assert again.status_code == 201
    assert again.get_json()["predictions"] == 0 and again.get_json()["jobs"] == first["jobs"]
    assert stored(app)[:2] == counts[:2]


def test_one_bad_file_imports_nothing_and_names_file_line_and_field(api):
    app, client = api
    rows = [json.loads(line) for line in demo_file(QUALITY, "beta").decode().splitlines()]
    rows[2]["beta_pred"] = 7  # not text
    bad = ("\n".join(json.dumps(row) for row in rows) + "\n").encode()
    before = stored(app)
    answer = upload(client, "both.zip", make_zip({"beta/quality.pred.jsonl": bad,
                                                  "gamma.pred.jsonl": demo_file(HUMAN, "gamma")}))
    assert answer.status_code == 422
    errors = answer.get_json()["errors"]
    assert errors and errors[0]["file"] == "beta/quality.pred.jsonl" and errors[0]["line"] == 3
    assert errors[0]["field"] == "beta_pred" and errors[0]["message"]
    assert stored(app) == before


def test_unusable_uploads_get_422_or_413_in_json_and_import_nothing(api):
    app, client = api
    before = stored(app)
    for name, content in (("notes.txt", b"hello"), ("broken.zip", b"not a zip"), ("empty.pred.jsonl", b"")):
        answer = upload(client, name, content)
        assert answer.status_code == 422 and answer.get_json()["errors"][0]["message"], name
    answer = client.post("/api/v1/predictions", json={"system": "x"})
    assert answer.status_code == 415 and "multipart/form-data" in answer.get_json()["error"]
    answer = client.post("/api/v1/predictions", data={"system": "x"}, content_type="multipart/form-data")
    assert answer.status_code == 422 and answer.get_json()["errors"][0]["field"] == "file"
    app.config["MAX_CONTENT_LENGTH"] = 1000
    answer = upload(client, "big.pred.jsonl", b"x" * 5000)
    assert answer.status_code == 413 and answer.get_json()["error"]
    assert stored(app) == before


def test_the_leaderboard_is_the_pages_json(api):
    app, client = api
    from tests.conftest import AuthActions

    page = app.test_client()
    AuthActions(page).login("researcher")
    for profile in ("official", "fixed"):
        api_answer = client.get(f"/api/v1/leaderboard?profile={profile}").get_json()
        assert api_answer == page.get(f"/leaderboard/json?profile={profile}").get_json()
        assert api_answer["systems"] and all(s["profile"] == profile for s in api_answer["systems"])
    assert client.get("/api/v1/leaderboard?profile=best").status_code == 422


def test_unknown_objects_are_404_and_lists_are_paginated(api):
    _, client = api
    for url in ("/api/v1/jobs/999999", "/api/v1/studies/999999", "/api/v1/studies/999999/export",
                "/api/v1/results/999999", "/api/v1/studies/nope", "/api/v1/results/nope/scores"):
        answer = client.get(url)
        assert answer.status_code == 404 and answer.get_json()["error"], url
    assert client.post("/api/v1/studies/999999/open").status_code == 404
    everything = client.get("/api/v1/systems?per_page=500").get_json()
    assert everything["total"] >= 2
    first = client.get("/api/v1/systems?per_page=1&page=1").get_json()
    second = client.get("/api/v1/systems?per_page=1&page=2").get_json()
    assert first["items"] == everything["items"][:1] and second["items"] == everything["items"][1:2]
    assert client.get("/api/v1/systems?per_page=0").status_code == 422


def test_a_study_is_created_opened_shown_exported_and_closed(api):
    _, client = api
    made = client.post("/api/v1/studies", json={"name": "api-study", "questions": "human_eval", "annotators": ["annotator"], "overlap": 1})
    assert made.status_code == 201, made.get_json()
    assert made.get_json()["status"] == "draft" and made.get_json()["questions"] > 0
    study = made.get_json()["id"]
    assert client.post("/api/v1/studies", json={"name": "api-study"}).status_code == 409
    opened = client.post(f"/api/v1/studies/{study}/open")
    assert opened.status_code == 200 and opened.get_json()["status"] == "open"
    shown = client.get(f"/api/v1/studies/{study}").get_json()
    assert shown["name"] == "api-study" and isinstance(shown["progress"], list)
    listed = client.get("/api/v1/studies").get_json()
    assert "api-study" in [s["name"] for s in listed["items"]]
    csv_export = client.get(f"/api/v1/studies/{study}/export?format=csv")
    assert csv_export.status_code == 200 and csv_export.mimetype == "text/csv"
    assert csv_export.get_data(as_text=True).splitlines()[0].startswith("annotator,system,")
    results = client.get(f"/api/v1/studies/{study}/export?format=results").get_json()
    assert results["study"]["name"] == "api-study"
    assert client.get(f"/api/v1/results/{study}").get_json()["study"] == results["study"]
    assert client.get(f"/api/v1/results/{study}/scores").get_json()["total"] == 0
    assert client.post(f"/api/v1/studies/{study}/close").get_json()["status"] == "closed"
    assert client.post("/api/v1/studies", json={"name": "x", "annotators": ["nobody"]}).status_code == 422
    assert client.post("/api/v1/studies", json={"name": "y", "bogus": 1}).status_code == 422


@pytest.mark.parametrize("digits", ["¹", "²3", "٣"])
def test_digits_of_other_scripts_name_no_study_and_no_question(api, digits):
    _, client = api
    for method, url in (("GET", "/api/v1/studies/{}"), ("POST", "/api/v1/studies/{}/open"),
                        ("POST", "/api/v1/studies/{}/close"), ("GET", "/api/v1/studies/{}/export"),
                        ("GET", "/api/v1/results/{}"), ("GET", "/api/v1/results/{}/scores")):
        answer = client.open(url.format(digits), method=method)
        assert answer.status_code == 404 and answer.get_json()["error"], url
    assert client.post("/api/v1/rater-runs", json={"study": digits, "dry_run": True}).status_code in (404, 422)
    for questions in (f"ids:{digits}", f"ids:1,{digits}", f"study:{digits}"):
        answer = client.post("/api/v1/studies", json={"name": f"set {questions}", "questions": questions})
        assert answer.status_code == 422 and answer.get_json()["error"], questions


DEEP = 100_000


@pytest.mark.parametrize("body, field, says", [
    ('{"name": ' + "[" * DEEP + "]" * DEEP + "}", "name", "JSON nested deeper than 100 levels at line 1, column 109"),
    ('{"name": "深", "description": ' + '{"a": ' * DEEP + "0" + "}" * DEEP + "}", "description", "nested deeper"),
    ("[" * DEEP + "]" * DEEP, None, "JSON nested deeper than 100 levels at line 1, column 101"),
    ('{"name": "x",\n "overlap": ' + "9" * 5000 + "}", "overlap", "a number of 5,000 characters; at most 300 are read "
                                                                 "at line 2, column 13"),
    ('{"name": "x", "overlap": 1,}', None, "invalid JSON: Expecting property name enclosed in double quotes"),
])
def test_a_body_the_json_reader_refuses_is_a_422_naming_the_field_and_stores_nothing(api, body, field, says):
    app, client = api
    before = stored(app)
    for url in ("/api/v1/studies", "/api/v1/judge-runs", "/api/v1/rater-runs", "/api/v1/generation-runs"):
        answer = client.post(url, data=body, content_type="application/json")
        assert answer.status_code == 422, (url, answer.status_code)
        error = answer.get_json()["errors"][0]
        assert error["field"] == field and says in error["message"], (url, error)
    assert stored(app) == before
    with app.app_context():
        from app.models import Study

        assert db.session.scalar(select(func.count(Study.id)).where(Study.name.in_(("x", "深")))) == 0
