"""A body of another media type than the route takes answers 415 in the API's error shape, on every API write route.

The routes come from the app's url_map and what each takes from the OpenAPI document (its requestBody), so a
new route with a body is tested as soon as it exists. docs/api.md promises the 415; a JSON body sent as
text/plain used to be read as an empty object and answer 422 (or, for a model without required fields, run).
"""
from __future__ import annotations

import json

from tests.support.api import api_rules, bearer, make_token, table_counts, url_of

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
JSON = "application/json"
FORM = "multipart/form-data"
# What each route is sent: a body it would take, under every media type it does not take.
BODY = json.dumps({"name": "media-type-check", "dry_run": True}).encode()
OTHER_TYPES = {JSON: ["text/plain", "application/x-www-form-urlencoded", FORM + "; boundary=x", None],
               FORM: [JSON, "text/plain", None]}


def openapi_path(rule) -> str:
    return rule.rule.replace("<int:", "{").replace("<", "{").replace(">", "}")


def routes_with_a_body(app, document):
    """(rule, method, the media types its requestBody lists) of every API write route that takes a body."""
    for rule, method in api_rules(app):
        operation = document["paths"].get(openapi_path(rule), {}).get(method.lower(), {})
        if method in WRITE_METHODS and "requestBody" in operation:
            yield rule, method, set(operation["requestBody"]["content"])


def test_every_api_write_route_answers_415_to_a_body_of_another_media_type(demo):
    secret = make_token(demo, "admin", "write")
    client = demo.test_client()
    document = client.get("/api/v1/openapi.json", headers=bearer(secret)).get_json()
    routes = list(routes_with_a_body(demo, document))
    assert {rule.rule for rule, *_ in routes} >= {"/api/v1/studies", "/api/v1/judge-runs", "/api/v1/rater-runs",
                                                 "/api/v1/generation-runs", "/api/v1/predictions"}
    before = table_counts(demo)
    wrong = []
    for rule, method, takes in routes:
        assert takes in ({JSON}, {FORM}), f"{method} {rule.rule} takes {takes}"
        for sent in OTHER_TYPES[next(iter(takes))]:
            headers = {**bearer(secret), **({"Content-Type": sent} if sent else {})}
            answer = client.open(url_of(rule, {}), method=method, headers=headers, data=BODY)
            body = answer.get_json(silent=True) or {}
            if answer.status_code != 415 or body.get("status") != 415 or not body.get("error"):
                wrong.append(f"{method} {rule.rule} sent as {sent}: {answer.status_code} {body}")
            elif takes == {JSON} and "application/json" not in body["error"]:
                wrong.append(f"{method} {rule.rule}: the 415 does not say what to send: {body['error']}")
            if "415" not in document["paths"][openapi_path(rule)][method.lower()]["responses"]:
                wrong.append(f"{method} {rule.rule}: the OpenAPI document does not list its 415")
    assert table_counts(demo) == before, "a refused body changed the database"
    assert not wrong, "\n".join(wrong)


def test_the_media_type_a_route_takes_is_not_refused(demo):
    """The same JSON, sent as JSON (with a charset, too), reaches the validation: a 422 names the field, never a 415."""
    client = demo.test_client()
    headers = bearer(make_token(demo, "admin", "write"))
    for content_type in (JSON, "application/json; charset=utf-8"):
        answer = client.post("/api/v1/studies", headers={**headers, "Content-Type": content_type},
                             data=json.dumps({"name": ""}))
        assert answer.status_code == 422 and answer.get_json()["errors"][0]["field"] == "name", answer.get_json()


def test_a_415_comes_after_the_token_and_scope_checks(demo):
    """A caller without a live write token learns nothing about bodies: 401 and 403 come first."""
    client = demo.test_client()
    plain = {"Content-Type": "text/plain"}
    assert client.post("/api/v1/studies", headers=plain, data=BODY).status_code == 401
    read = bearer(make_token(demo, "researcher", "read"))
    assert client.post("/api/v1/studies", headers={**read, **plain}, data=BODY).status_code == 403
