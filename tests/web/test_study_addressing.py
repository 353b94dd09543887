"""A study is addressed by its id in every path and page, and by its name only where a name is asked for
(`GET /api/v1/studies?name=`): a study named "1" is never taken for the study whose id is 1."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Study
from tests.conftest import AuthActions
from tests.support.api import make_token


@pytest.fixture
def api(demo):
    client = demo.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = "Bearer " + make_token(demo, "researcher", "write")
    return demo, client


def status_of(app, study_id: int) -> str:
    with app.app_context():
        return db.session.get(Study, study_id).status


def test_a_study_named_with_the_digits_of_another_studys_id_is_found_by_name_and_moved_by_its_own_id(api):
    app, client = api
    with app.app_context():
        first = db.session.scalars(select(Study).order_by(Study.id)).first()
        first_id, first_status = first.id, first.status
    made = client.post("/api/v1/studies", json={"name": str(first_id), "questions": "demo"})
    assert made.status_code == 201, made.get_json()
    named = made.get_json()["id"]
    assert named != first_id
    found = client.get(f"/api/v1/studies?name={first_id}").get_json()
    assert [row["id"] for row in found["items"]] == [named] and found["total"] == 1
    assert client.post(f"/api/v1/studies/{named}/open").get_json()["name"] == str(first_id)
    assert status_of(app, named) == "open" and status_of(app, first_id) == first_status
    assert client.get(f"/api/v1/results/{named}").get_json()["study"]["id"] == named
    assert client.post(f"/api/v1/studies/{named}/close").get_json()["status"] == "closed"
    assert status_of(app, first_id) == first_status


def test_a_name_is_found_case_insensitively_and_in_chinese_and_an_unknown_one_lists_nothing(api):
    _, client = api
    for name in ("Pilot Round", "试点研究 第二轮"):
        made = client.post("/api/v1/studies", json={"name": name, "questions": "demo"})
        assert made.status_code == 201, made.get_json()
        for asked in (name, name.upper(), f"  {name} "):
            found = client.get("/api/v1/studies", query_string={"name": asked}).get_json()["items"]
            assert [row["id"] for row in found] == [made.get_json()["id"]], asked
    assert client.get("/api/v1/studies?name=nobody").get_json() == {"items": [], "page": 1, "per_page": 100,
                                                                     "total": 0}
    assert client.get("/api/v1/studies?name=").status_code == 422


@pytest.mark.parametrize("name", ["a/b", "a\\b", "..", "evil\u202egnp", "zero\u200bwidth", "研究/一"])
def test_a_name_no_script_can_use_is_a_422_naming_the_field_and_creates_nothing(api, name):
    app, client = api
    with app.app_context():
        before = db.session.scalar(select(func.count(Study.id)))
    answer = client.post("/api/v1/studies", json={"name": name, "questions": "demo"})
    assert answer.status_code == 422, answer.get_json()
    body = answer.get_json()
    assert body["errors"][0]["field"] == "name" and "is not allowed: a study name has" in body["errors"][0]["message"]
    with app.app_context():
        assert db.session.scalar(select(func.count(Study.id))) == before


def test_a_path_that_is_no_id_addresses_nothing(api):
    _, client = api
    client.post("/api/v1/studies", json={"name": "named", "questions": "demo"})
    for url in ("/api/v1/studies/named", "/api/v1/studies/a/b", "/api/v1/studies/a%2Fb/open", "/api/v1/results/named",
                "/api/v1/studies/-1", "/api/v1/studies/1.0"):
        answer = client.open(url, method="POST" if url.endswith("open") else "GET")
        assert answer.status_code == 404 and answer.get_json()["error"], url


def test_the_openapi_document_says_paths_take_ids_and_the_list_takes_a_name(api):
    _, client = api
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    assert not [path for path in paths if "{name}" in path]
    for path in ("/api/v1/studies/{study_id}", "/api/v1/studies/{study_id}/open", "/api/v1/results/{study_id}/scores"):
        operation = next(iter(paths[path].values()))
        parameter = next(p for p in operation["parameters"] if p["name"] == "study_id")
        assert parameter["schema"]["type"] == "integer" and "name" in parameter["description"]
    listing = [p["name"] for p in paths["/api/v1/studies"]["get"]["parameters"]]
    assert "name" in listing


def test_the_results_pages_take_a_studys_id_never_its_name(demo):
    client = demo.test_client()
    AuthActions(client).login("researcher")
    with demo.app_context():
        study = db.session.scalars(select(Study).order_by(Study.id)).first()
        study_id, name = study.id, study.name
    assert client.get(f"/results?study={study_id}").status_code == 200
    assert client.get("/results", query_string={"study": name}).status_code == 404
