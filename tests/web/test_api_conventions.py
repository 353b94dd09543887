"""The API's conventions (issue 37): RFC 9457 problem documents with the fields at fault, Location on 201, RFC 8288
Link on lists, ETag and If-None-Match on reads, RFC 3339 times with offsets, Idempotency-Key on creating POSTs,
RateLimit headers on every limited answer, and a stale token's failures that lock out nobody else."""
from __future__ import annotations

import io
import re
from datetime import datetime

import pytest
from sqlalchemy import func, select

from app import create_app
from app.extensions import db
from app.models import Study, System
from app.services.metrics import submit_metrics_job
from tests.support.api import bearer, make_token
from tests.support.predictions import demo_file

PROBLEM = "application/problem+json"
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


@pytest.fixture
def api(demo):
    client = demo.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = "Bearer " + make_token(demo, "researcher", "write")
    return demo, client


def problem(answer, status: int) -> dict:
    assert answer.status_code == status, (answer.status_code, answer.get_data(as_text=True))
    assert answer.mimetype == PROBLEM
    body = answer.get_json()
    assert {"type", "title", "status", "detail", "instance", "errors"} <= set(body), body
    assert body["status"] == status and body["detail"] == body["error"] and body["type"] == "about:blank"
    assert body["errors"] and all(error["message"] for error in body["errors"]), body
    return body


def test_every_kind_of_refusal_is_a_problem_document_naming_what_is_at_fault(api):
    app, client = api
    plain = app.test_client()
    assert problem(plain.get("/api/v1/systems"), 401)["errors"][0]["field"] == "Authorization"
    read = bearer(make_token(app, "researcher", "read"))
    assert problem(plain.post("/api/v1/studies", headers=read, json={"name": "x"}), 403)["errors"][0]["location"] \
        == "header"
    annotator = bearer(make_token(app, "annotator", "write"))
    problem(plain.get("/api/v1/systems", headers=annotator), 403)
    missing = problem(client.get("/api/v1/studies/999999"), 404)
    assert missing["errors"][0]["field"] == "study_id" and missing["instance"] == "/api/v1/studies/999999"
    problem(client.get("/api/v1/nowhere"), 404)
    problem(client.patch("/api/v1/studies"), 405)
    assert problem(client.post("/api/v1/studies", data="{}", content_type="text/plain"), 415)["errors"][0]["field"] \
        == "Content-Type"
    invalid = problem(client.post("/api/v1/studies", json={"name": "", "overlap": 0}), 422)
    assert {(e["field"], e["location"]) for e in invalid["errors"]} == {("name", "body"), ("overlap", "body")}
    assert problem(client.get("/api/v1/systems?per_page=0"), 422)["errors"][0] == {
        "file": None, "line": None, "field": "per_page", "location": "query",
        "message": "Input should be greater than or equal to 1"}
    client.post("/api/v1/studies", json={"name": "taken"})
    assert problem(client.post("/api/v1/studies", json={"name": "TAKEN"}), 409)["errors"][0]["field"] == "name"


def test_lists_link_their_pages_keeping_their_filters(api):
    _, client = api
    total = client.get("/api/v1/systems?scored=false").get_json()["total"]
    assert total >= 3
    answer = client.get("/api/v1/systems?scored=false&per_page=1&page=2")
    links = dict((rel, url) for url, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', answer.headers["Link"]))
    assert links == {"first": "/api/v1/systems?scored=false&page=1&per_page=1",
                     "prev": "/api/v1/systems?scored=false&page=1&per_page=1",
                     "next": "/api/v1/systems?scored=false&page=3&per_page=1",
                     "last": f"/api/v1/systems?scored=false&page={total}&per_page=1"}
    following = client.get(links["next"]).get_json()
    assert following["page"] == 3 and following["items"][0]["id"] != answer.get_json()["items"][0]["id"]
    assert 'rel="next"' not in client.get(links["last"]).headers["Link"]


def test_reads_answer_an_etag_and_304_until_something_changes(api):
    app, client = api
    first = client.get("/api/v1/studies")
    etag = first.headers["ETag"]
    assert first.headers["Cache-Control"] == "private, no-cache" and "Authorization" in first.headers["Vary"]
    again = client.get("/api/v1/studies", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.get_data() == b"" and again.headers["ETag"] == etag
    client.post("/api/v1/studies", json={"name": "changes the list"})
    changed = client.get("/api/v1/studies", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] != etag
    assert client.get("/api/v1/studies", headers={"If-None-Match": '"other"'}).status_code == 200


def test_times_are_rfc_3339_with_an_offset(api):
    app, client = api
    with app.app_context():
        job = submit_metrics_job(db.session.scalars(select(System).order_by(System.id)).first(), enqueue=False).id
    made = client.post("/api/v1/studies", json={"name": "timed"}).get_json()
    stamps = [client.get(f"/api/v1/jobs/{job}").get_json()["created_at"], made["created_at"],
              client.get("/api/v1/tokens").get_json()["items"][0]["created_at"]]
    for stamp in stamps:
        assert RFC3339.match(stamp), stamp
        assert datetime.fromisoformat(stamp.replace("Z", "+00:00")).utcoffset().total_seconds() == 0


def count_studies(app) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count(Study.id)))


def test_a_repeated_idempotency_key_answers_the_first_answer_and_makes_nothing_twice(api):
    app, client = api
    key = {"Idempotency-Key": "study-7f3a"}
    before = count_studies(app)
    first = client.post("/api/v1/studies", json={"name": "once", "questions": "human_eval"}, headers=key)
    again = client.post("/api/v1/studies", json={"questions": "human_eval", "name": "once"}, headers=key)
    assert first.status_code == again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json() and again.headers["Location"] == first.headers["Location"]
    assert count_studies(app) == before + 1
    other = problem(client.post("/api/v1/studies", json={"name": "twice"}, headers=key), 422)
    assert other["errors"][0] == {"file": None, "line": None, "field": "Idempotency-Key", "location": "header",
                                  "message": other["detail"]}
    # The key is the account's: another account's same key is its own request.
    admin = app.test_client().post("/api/v1/studies", json={"name": "admins"},
                                   headers={**key, **bearer(make_token(app, "admin", "write"))})
    assert admin.status_code == 201 and "Idempotent-Replayed" not in admin.headers
    # A request that failed made nothing and keeps no answer: its retry runs again.
    refused = client.post("/api/v1/studies", json={"name": "later", "systems": [999999]},
                          headers={"Idempotency-Key": "k2"})
    assert refused.status_code == 422
    problem(client.post("/api/v1/studies", json={"name": "x", "systems": [999999]}, headers={"Idempotency-Key": ""}),
            422)


def test_an_upload_retried_with_its_key_is_imported_once(api):
    app, client = api
    content = demo_file("human_eval/terse-13b.pred.jsonl", "alpha")
    answers = [client.post("/api/v1/predictions", headers={"Idempotency-Key": "upload-1"},
                           content_type="multipart/form-data",
                           data={"file": (io.BytesIO(content), "alpha.pred.jsonl"), "system": "alpha"})
               for _ in range(2)]  # each request has its own multipart boundary
    assert [a.status_code for a in answers] == [201, 201] and answers[1].headers["Idempotent-Replayed"] == "true"
    assert answers[1].get_json() == answers[0].get_json() and answers[0].get_json()["predictions"] > 0
    changed = client.post("/api/v1/predictions", headers={"Idempotency-Key": "upload-1"},
                          content_type="multipart/form-data",
                          data={"file": (io.BytesIO(content + b"\n"), "alpha.pred.jsonl"), "system": "alpha"})
    assert changed.status_code == 422


def test_bad_tokens_answer_ratelimit_headers_and_a_stale_token_locks_out_nobody_else(tmp_path, migrated_copy):
    app = create_app({**migrated_copy(tmp_path / "instance"), "TESTING": True,
                      "LEVAL_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE": 3})
    good = bearer(make_token(app, "researcher", "read"))
    stale = bearer(make_token(app, "researcher", "read", revoked=True))
    client = app.test_client()
    answers = [client.get("/api/v1/systems", headers=stale) for _ in range(5)]
    assert [a.status_code for a in answers] == [401, 401, 401, 429, 429]
    assert [a.headers["RateLimit-Remaining"] for a in answers] == ["2", "1", "0", "0", "0"]
    assert answers[0].headers["RateLimit-Limit"] == "3" and answers[0].headers["RateLimit-Policy"] == "3;w=60"
    assert "revoked" in answers[0].get_json()["detail"] and int(answers[0].headers["RateLimit-Reset"]) >= 1
    assert int(answers[3].headers["Retry-After"]) >= 1 and answers[3].mimetype == PROBLEM
    assert client.get("/api/v1/systems", headers=good).status_code == 200  # the address is not locked out
    guesses = [client.get("/api/v1/systems", headers=bearer(f"lvs_guess{i}")) for i in range(4)]
    assert [g.status_code for g in guesses] == [401, 401, 401, 429]
    assert guesses[0].headers["RateLimit-Remaining"] == "2"
    locked = client.get("/api/v1/systems", headers=good)  # guesses do lock out the address, as sign-ins do
    assert locked.status_code == 429 and locked.headers["RateLimit-Remaining"] == "0"
    with app.app_context():
        db.session.remove()
        db.engine.dispose()
