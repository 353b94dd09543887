"""Error answers: styled pages with the menu, JSON on API routes, and ids past 2^63 (audit finding 6).

The browser test of the same pages is tests/e2e/test_error_pages.py.
"""
from __future__ import annotations

import pytest
from werkzeug.routing import IntegerConverter

from app.extensions import db
from app.web.routing import MAX_DB_ID, comma_ids, id_list
from tests.conftest import AuthActions
from tests.web.test_security import build_url, rules, url_values

HUGE = 2 ** 63
API_ROUTES = ("/api/v1/", "/annotate/api/", "/jobs/api", "/annotate/document/", "/judge/win-rates.json", "/leaderboard/json")
JSON_SUFFIX = ".json"  # every *.json route answers JSON too (app.web.errors.API_PATH), e.g. the authoring panes


def signed_in(app, username: str):
    client = app.test_client()
    auth = AuthActions(client)
    assert auth.login(username).status_code == 302
    return client, auth


PLACEHOLDER = 987654321


def int_rules(app, bad_id: str = str(HUGE)):
    """(url, methods) for each <int:…> argument of each rule, that argument set to bad_id, the others real."""
    values = url_values(app)
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        for name in rule.arguments:
            if not isinstance(rule._converters[name], IntegerConverter):
                continue
            url = build_url(rule, {**values, name: PLACEHOLDER}).replace(str(PLACEHOLDER), bad_id)
            yield url, sorted(rule.methods - {"HEAD", "OPTIONS"})


# Past 2^63; thousands of digits (int() refuses them); digits of other scripts: '¹' and '²3' fail int(), '٣' and
# '１' (fullwidth) are 3 and 1 to int() and named real objects.
BAD_IDS = [str(HUGE), "9" * 5000, "¹", "²3", "٣", "１"]


@pytest.mark.parametrize("bad_id", BAD_IDS, ids=["2^63", "5000 digits", "superscript 1", "superscript 2 then 3",
                                                 "arabic-indic 3", "fullwidth 1"])
def test_every_int_segment_that_is_no_storable_ascii_id_is_a_404_never_a_500(demo, bad_id):
    client, auth = signed_in(demo, "admin")
    token = auth.token()
    walked, wrong = 0, []
    for url, methods in int_rules(demo, bad_id):
        for method in methods:
            walked += 1
            response = client.open(url, method=method, data={"csrf_token": token}, headers={"X-CSRFToken": token})
            api = any(marker in url for marker in API_ROUTES) or url.split("?")[0].endswith(JSON_SUFFIX)
            if response.status_code != 404:
                wrong.append(f"{method} {url}: {response.status_code}")
            elif api and response.get_json(silent=True) is None:
                wrong.append(f"{method} {url}: 404 but not JSON on an API route")
            elif not api and "Page not found" not in response.get_data(as_text=True):
                wrong.append(f"{method} {url}: 404 without the styled page")
    assert walked >= 20, "the walk must cover every <int:…> route"
    assert not wrong, "\n".join(wrong)


def test_the_largest_storable_id_is_an_ordinary_not_found(demo):
    client, _ = signed_in(demo, "admin")
    for url in (f"/jobs/{MAX_DB_ID}", f"/leaderboard/systems/{MAX_DB_ID}"):
        assert client.get(url).status_code == 404
    response = client.get(f"/jobs/api/{MAX_DB_ID}")
    assert response.status_code == 404 and response.is_json


def test_a_huge_question_id_in_the_score_api_is_a_400_in_json(demo):
    client, auth = signed_in(demo, "annotator")
    response = client.post("/annotate/api/score", json={
        "study": 1, "question_id": HUGE, "label": "A", "value": 3, "answer": "0" * 64,
    }, headers={"X-CSRFToken": auth.token()})
    assert response.status_code == 400
    assert response.get_json()["field"] == "question_id"


def test_huge_ids_in_query_strings_and_forms_are_left_out(demo):
    assert comma_ids(f"1,{HUGE},2, 3 ,x") == [1, 2, 3] and id_list([str(MAX_DB_ID), str(HUGE), "-1"]) == [MAX_DB_ID]
    client, auth = signed_in(demo, "admin")
    assert client.get(f"/predictions?jobs=1,{HUGE}").status_code == 200
    assert client.get(f"/jobs?ids={HUGE}").status_code == 200
    assert client.get(f"/results?study={HUGE}").status_code == 404


@pytest.mark.parametrize("digits", ["¹", "²3", "٣", "三"])
def test_digits_of_other_scripts_in_query_strings_are_no_ids(demo, digits):
    assert comma_ids(f"1,{digits},2") == [1, 2] and id_list([digits]) == []
    client, _ = signed_in(demo, "admin")
    assert client.get(f"/predictions?jobs=1,{digits}").status_code == 200
    assert client.get(f"/jobs?ids={digits}").status_code == 200
    assert client.get(f"/jobs/api?ids={digits},1").status_code == 200
    assert client.get(f"/results?study={digits}").status_code == 404
    for path in ("/generate/compare?a=1&b={}", "/judge/runs/1/quotes?question={}", "/judge/rater/runs/1/quotes?answer={}"):
        assert client.get(path.format(digits)).status_code in (400, 404), path


# Styled pages and JSON


def test_a_404_page_has_the_layout_and_the_menu(demo):
    client, _ = signed_in(demo, "researcher")
    response = client.get("/no/such/page")
    page = response.get_data(as_text=True)
    assert response.status_code == 404 and response.mimetype == "text/html"
    assert 'class="mainnav"' in page and ">Leaderboard</a>" in page and "Page not found" in page
    assert "Back to the overview" in page and "werkzeug" not in page.lower()


def test_a_403_page_has_the_layout_and_names_the_reason(demo):
    client, _ = signed_in(demo, "annotator")
    response = client.get("/predictions")
    page = response.get_data(as_text=True)
    assert response.status_code == 403 and "Not allowed" in page and 'class="mainnav"' in page


def test_a_405_page_and_its_allow_header(demo):
    client, _ = signed_in(demo, "researcher")
    response = client.get("/logout")
    assert response.status_code == 405 and "POST" in response.headers["Allow"]
    assert "does not take GET requests" in response.get_data(as_text=True)
    api = client.get("/annotate/api/score")
    assert api.status_code == 405 and api.get_json()["status"] == 405


def test_a_400_keeps_the_views_own_words(demo):
    client, _ = signed_in(demo, "researcher")
    response = client.get("/results?view=nonsense")
    page = response.get_data(as_text=True)
    assert response.status_code == 400 and "view must be one of" in page and "Bad request" in page


def test_a_stale_form_token_is_a_styled_400_and_json_on_the_api(demo):
    client, auth = signed_in(demo, "researcher")
    response = client.post("/studies/new", data={"csrf_token": "stale", "name": "x"})
    assert response.status_code == 400 and "security token" in response.get_data(as_text=True)
    assert 'class="mainnav"' in response.get_data(as_text=True)
    api = client.post("/annotate/api/score", json={"question_id": 1})
    assert api.status_code == 400 and api.get_json()["reload"] is True


def test_api_routes_answer_json_errors(demo):
    client, _ = signed_in(demo, "researcher")
    for url in ("/jobs/api/999999", "/annotate/document/999999"):
        response = client.get(url)
        assert response.status_code == 404 and response.is_json and "error" in response.get_json(), url
    signed_out = demo.test_client().get("/jobs/api")
    assert signed_out.status_code == 401 and signed_out.get_json() == {"error": "sign-in required"}


def test_a_page_error_signed_out_offers_sign_in(app):
    page = app.test_client().get("/static/no-such-file.css")
    assert page.status_code == 404
    text = app.test_client().get("/nothing-here").get_data(as_text=True)
    assert "Page not found" in text and "Sign in" in text


@pytest.fixture
def production_app(tmp_path, migrated_copy):
    """An app that handles errors as in production (not TESTING), with a route that fails."""
    from app import create_app

    app = create_app(migrated_copy(tmp_path / "prod"))

    @app.get("/explode")
    def explode():
        raise RuntimeError("internal detail /secret/path")

    @app.get("/api/explode")
    def explode_api():
        raise RuntimeError("internal detail /secret/path")

    yield app
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def test_a_500_is_styled_and_shows_no_internals(production_app):
    client, _ = signed_in(production_app, "admin")
    response = client.get("/explode")
    page = response.get_data(as_text=True)
    assert response.status_code == 500 and "Something went wrong" in page and 'class="mainnav"' in page
    assert "secret" not in page and "Traceback" not in page
    api = client.get("/api/explode")
    assert api.status_code == 500 and api.get_json()["status"] == 500 and "secret" not in api.get_data(as_text=True)


def test_a_json_download_signed_out_is_sent_to_sign_in(app):
    """Exports are files a browser follows, not an API: signed out, they redirect to the sign-in page."""
    response = app.test_client().get("/results/export/results.json")
    assert response.status_code == 302 and "/login" in response.headers["Location"]
    api = app.test_client().get("/jobs/api")
    assert api.status_code == 401 and api.is_json


def test_a_value_the_database_refuses_is_a_400_that_says_nothing_was_saved(demo, monkeypatch):
    """The net behind the input rules: PostgreSQL's DataError (too long, NUL) is a 400, never a 500."""
    from sqlalchemy.exc import DataError

    from app.web import predictions as views

    def refused(*args, **kwargs):
        raise DataError("UPDATE predictions …", {}, Exception("value too long for type character varying(10)"))

    monkeypatch.setattr(views, "set_long_answers", refused)
    client, auth = signed_in(demo, "researcher")
    response = client.post("/predictions/systems/1/long-answers", data={"csrf_token": auth.token(), "decision": "show"})
    assert response.status_code == 400
    assert "too long for its field or holds a character the database cannot store" in response.get_data(as_text=True)
    assert "Nothing was saved" in response.get_data(as_text=True)


DEEP_BODIES = {"nested 100,000 deep": '{"version": ' + "[" * 100_000 + "]" * 100_000 + "}",
               "a 5,000-digit number": '{"version": ' + "9" * 5000 + ', "study": 1, "question_id": 1}'}


@pytest.mark.parametrize("body", DEEP_BODIES.values(), ids=DEEP_BODIES.keys())
def test_a_json_body_no_reader_takes_is_refused_by_every_page_route_never_a_500(demo, body):
    """Every route a signed-in browser may POST to, sent a JSON body the reader refuses (get_json(silent=True)
    raised RecursionError past it): an answer below 500 from each."""
    client, auth = signed_in(demo, "admin")
    token = auth.token()
    wrong, walked = [], 0
    for endpoint, url, method in rules(demo):
        if method != "POST" or endpoint in ("auth.logout", "account.end_other_sessions"):
            continue
        walked += 1
        response = client.post(url, data=body, content_type="application/json", headers={"X-CSRFToken": token})
        if response.status_code >= 500:
            wrong.append(f"POST {url}: {response.status_code}")
    assert walked >= 20 and not wrong, "\n".join(wrong)
