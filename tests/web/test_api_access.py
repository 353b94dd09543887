"""Who may call each route of the token API: every route × every kind of token (the role and scope matrix).

The routes come from the app's url_map, so a new API route is in the matrix as soon as it exists. Also
here: bad tokens are throttled by the sign-in limiter, and the OpenAPI document validates.
"""
from __future__ import annotations

import pytest
from openapi_spec_validator import validate
from sqlalchemy import select

from app import create_app
from app.extensions import db
from app.models import Study, System, User
from app.services.accounts import set_active
from app.services.metrics import submit_metrics_job
from app.services.studies import setup
from tests.conftest import PASSWORDS, AuthActions
from tests.support.api import api_rules, bearer, make_token, table_counts, url_of


@pytest.fixture
def world(demo):
    """The demo with a metrics job and a study, so that id routes have real objects to name."""
    with demo.app_context():
        system = db.session.scalars(select(System).order_by(System.id)).first()
        job = submit_metrics_job(system)
        study = db.session.scalars(select(Study).order_by(Study.id)).first()
        if study is None:
            study = setup.create_study(setup.StudySpec(name="walk"))
        values = {"job_id": job.id, "study_id": study.id}
    return demo, values


def call(client, method, url, secret=None):
    headers = bearer(secret) if secret else {}
    return client.open(url, method=method, headers=headers, json={} if method == "POST" else None)


def test_every_route_answers_each_kind_of_token_as_its_role_and_scope_allow(world):
    app, values = world
    tokens = {
        "admin write": make_token(app, "admin", "write"), "researcher write": make_token(app, "researcher", "write"),
        "researcher read": make_token(app, "researcher", "read"), "annotator write": make_token(app, "annotator"),
        "revoked": make_token(app, "researcher", revoked=True), "expired": make_token(app, "admin", expired=True),
        "malformed": "lvs_not-a-token", "none": None,
    }
    client = app.test_client()
    refusals, allowed = [], []
    for rule, method in api_rules(app):
        view = app.view_functions[rule.endpoint]
        for kind, secret in tokens.items():
            if kind in ("revoked", "expired", "malformed", "none"):
                refusals.append((rule, method, kind, secret, 401))
            elif kind == "annotator write" and "annotator" not in view.required_roles or kind == "researcher read" and view.api_write:
                refusals.append((rule, method, kind, secret, 403))
            else:
                allowed.append((rule, method, kind, secret, None))
    before = table_counts(app)
    wrong = []
    for rule, method, kind, secret, expected in refusals:
        answer = call(client, method, url_of(rule, values), secret)
        if answer.status_code != expected or not answer.get_json().get("error"):
            wrong.append(f"{kind}: {method} {rule.rule} answered {answer.status_code}, not {expected}")
    assert table_counts(app) == before, "a refused request changed the database"
    for rule, method, kind, secret, _ in allowed:
        answer = call(client, method, url_of(rule, values), secret)
        if answer.status_code in (401, 403) or answer.status_code >= 500:
            wrong.append(f"{kind}: {method} {rule.rule} answered {answer.status_code}")
        if "Set-Cookie" in answer.headers:  # no session is made or changed by the API
            wrong.append(f"{kind}: {method} {rule.rule} set a cookie")
    assert len({rule.endpoint for rule, *_ in refusals}) >= 12
    assert {kind for *_, kind, _, _ in refusals} >= {"annotator write", "researcher read", "revoked", "expired"}
    assert not wrong, "\n".join(wrong)


def test_a_token_ends_with_its_account(app):
    secret = make_token(app, "researcher", "read")
    client = app.test_client()
    assert client.get("/api/v1/systems", headers=bearer(secret)).status_code == 200
    with app.app_context():
        researcher = db.session.scalars(select(User).where(User.username == "researcher")).one()
        admin = db.session.scalars(select(User).where(User.username == "admin")).one()
        set_active(researcher, False, by=admin)
        set_active(researcher, True, by=admin)  # reactivated: the token stays revoked
    answer = client.get("/api/v1/systems", headers=bearer(secret))
    assert answer.status_code == 401 and answer.headers["WWW-Authenticate"].startswith("Bearer")


def test_a_role_change_applies_to_the_token_at_once(app):
    secret = make_token(app, "researcher", "write")
    client = app.test_client()
    assert client.get("/api/v1/studies", headers=bearer(secret)).status_code == 200
    with app.app_context():
        db.session.scalars(select(User).where(User.username == "researcher")).one().role = "annotator"
        db.session.commit()
    assert client.get("/api/v1/studies", headers=bearer(secret)).status_code == 403


def test_bad_tokens_are_throttled_by_the_sign_in_limiter(tmp_path, migrated_copy):
    app = create_app({**migrated_copy(tmp_path / "instance"), "TESTING": True,
                      "LEVAL_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE": 3})
    good = make_token(app, "researcher", "read")
    client = app.test_client()
    answers = [client.get("/api/v1/systems", headers=bearer(f"lvs_guess{i}")).status_code for i in range(5)]
    assert answers == [401, 401, 401, 429, 429]
    limited = client.get("/api/v1/systems", headers=bearer(good))
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) >= 1
    assert limited.get_json()["error"].startswith("too many bad tokens")
    # The same limiter: the address's sign-ins wait too.
    assert AuthActions(client).login("admin", PASSWORDS["admin"]).status_code == 429
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def test_good_tokens_do_not_use_up_the_limit(tmp_path, migrated_copy):
    app = create_app({**migrated_copy(tmp_path / "instance"), "TESTING": True,
                      "LEVAL_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE": 2})
    good = make_token(app, "researcher", "read")
    client = app.test_client()
    assert {client.get("/api/v1/systems", headers=bearer(good)).status_code for _ in range(6)} == {200}
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def test_the_openapi_document_is_valid_openapi_3_1_and_lists_every_api_route(app):
    client = app.test_client()
    document = client.get("/api/v1/openapi.json", headers=bearer(make_token(app, "annotator", "read"))).get_json()
    validate(document)
    assert document["openapi"].startswith("3.1")
    assert document["components"]["securitySchemes"] == {"bearer": {"type": "http", "scheme": "bearer"}}
    documented = {(path, method.upper()) for path, item in document["paths"].items() for method in item}
    served = {(rule.rule.replace("<int:", "{").replace("<", "{").replace(">", "}"), method)
              for rule, method in api_rules(app) if rule.endpoint != "api.openapi"}
    assert served == documented
