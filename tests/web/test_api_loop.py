"""The endpoints of the whole evaluation loop (issue 37), each through the page's service and permission rule:
uploads that honour `system`, `replace` and unmatched rows; systems with per-question values and deletion;
questions of any set; jobs listed, cancelled and resumed; studies created with systems, allocation and budgets,
given systems and deleted; scores imported all or nothing; the caller's tokens listed and revoked."""
from __future__ import annotations

import io
import json
import time

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Prediction, Question, Score, Study, System, User
from app.models.ids import MAX_DB_ID
from app.services.metrics import submit_metrics_job
from app.services.studies import setup
from app.web.api.schemas.common import JOB_KINDS
from tests.support.api import bearer, make_token
from tests.support.predictions import demo_file, demo_rows, jsonl, make_zip

HUMAN = "human_eval/terse-13b.pred.jsonl"
QUALITY = "exam_eval/terse-13b/quality.pred.jsonl"


@pytest.fixture
def api(demo):
    client = demo.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = "Bearer " + make_token(demo, "researcher", "write")
    return demo, client


def upload(client, name: str, content: bytes, **fields):
    data = {"file": (io.BytesIO(content), name), **{key: str(value).lower() if isinstance(value, bool) else value
                                                    for key, value in fields.items()}}
    return client.post("/api/v1/predictions", data=data, content_type="multipart/form-data")


def counts(app) -> tuple[int, int]:
    with app.app_context():
        return (db.session.scalar(select(func.count(System.id))), db.session.scalar(select(func.count(Prediction.id))))


def system_id(app, name: str) -> int | None:
    with app.app_context():
        return db.session.scalar(select(System.id).where(System.name == name))


# -- uploads -----------------------------------------------------------------------------------------------


def test_system_names_every_file_of_the_upload_or_the_upload_is_refused(api):
    app, client = api
    answer = upload(client, "v2.pred.jsonl", demo_file(HUMAN, "v2"), system="my-model")
    assert answer.status_code == 201, answer.get_json()
    assert [s["name"] for s in answer.get_json()["systems"]] == ["my-model"]
    assert system_id(app, "v2") is None and system_id(app, "my-model") is not None
    before = counts(app)
    two = make_zip({"alpha.pred.jsonl": demo_file(HUMAN, "alpha"), "beta.pred.jsonl": demo_file(HUMAN, "beta")})
    refused = upload(client, "two.zip", two, system="my-model")
    assert refused.status_code == 422 and refused.mimetype == "application/problem+json"
    error = refused.get_json()["errors"][0]
    assert error["field"] == "system" and "alpha, beta" in error["message"]
    assert counts(app) == before
    assert upload(client, "two.zip", two).status_code == 201  # without `system`, each file names its own
    assert system_id(app, "alpha") and system_id(app, "beta")


def test_changed_answers_refuse_the_upload_until_replace_is_sent(api):
    app, client = api
    assert upload(client, "alpha.pred.jsonl", demo_file(HUMAN, "alpha")).status_code == 201
    changed = demo_file(HUMAN, "alpha", change=lambda i, text: f"{text} (v2)" if i < 3 else text)
    before = counts(app)
    refused = upload(client, "alpha.pred.jsonl", changed)
    assert refused.status_code == 409, refused.get_json()
    body = refused.get_json()
    assert body["errors"][0]["field"] == "replace" and "3 answer(s) differ" in body["errors"][0]["message"]
    assert counts(app) == before
    replaced = upload(client, "alpha.pred.jsonl", changed, replace=True)
    assert replaced.status_code == 201 and replaced.get_json()["predictions"] == 3, replaced.get_json()
    assert replaced.get_json()["files"][0]["replaced"] == 3
    with app.app_context():
        texts = db.session.scalars(select(Prediction.text).join(System).where(System.name == "alpha")).all()
    assert sum(text.endswith("(v2)") for text in texts) == 3


def test_rows_matching_no_question_refuse_the_upload_unless_skipped(api):
    app, client = api
    rows = json.loads(json.dumps(demo_rows(HUMAN)))
    for row in rows[:2]:
        row["query"] = "这个问题不存在 — no such question"
    content = jsonl([{**{k: v for k, v in row.items() if not k.endswith("_pred")}, "gamma_pred": "x"} for row in rows])
    before = counts(app)
    refused = upload(client, "gamma.pred.jsonl", content)
    assert refused.status_code == 422
    errors = refused.get_json()["errors"]
    assert [(e["file"], e["line"], e["field"]) for e in errors] == [("gamma.pred.jsonl", 1, "query"),
                                                                     ("gamma.pred.jsonl", 2, "query")]
    assert counts(app) == before
    skipped = upload(client, "gamma.pred.jsonl", content, skip_unmatched=True)
    assert skipped.status_code == 201 and skipped.get_json()["files"][0]["unmatched"] == 2
    assert skipped.get_json()["predictions"] == len(rows) - 2


def test_an_upload_is_read_back_by_its_owner_only(api):
    app, client = api
    made = upload(client, "alpha.pred.jsonl", demo_file(HUMAN, "alpha"))
    location = made.headers["Location"]
    assert location == f"/api/v1/uploads/{made.get_json()['upload']}"
    record = client.get(location).get_json()
    assert record["systems"] == ["alpha"] and record["predictions"] == made.get_json()["predictions"]
    assert record["created_at"].endswith("Z")
    other = app.test_client().get(location, headers=bearer(make_token(app, "admin", "read")))
    assert other.status_code == 404 and other.get_json()["errors"][0]["field"] == "upload_id"


# -- systems, questions, jobs -------------------------------------------------------------------------------


def test_a_system_shows_its_values_per_task_and_per_question_and_is_deleted(api, workers):
    app, client = api
    made = upload(client, "alpha.pred.jsonl", demo_file(HUMAN, "alpha")).get_json()
    job = made["jobs"][0]
    deadline = time.monotonic() + 60
    while (state := client.get(f"/api/v1/jobs/{job}").get_json()["state"]) in ("queued", "running"):
        assert time.monotonic() < deadline, "the metrics job did not end"
        time.sleep(0.1)
    assert state == "done"
    alpha = made["systems"][0]["id"]
    detail = client.get(f"/api/v1/systems/{alpha}").get_json()
    assert detail["name"] == "alpha" and detail["scored"] and detail["prediction_files"][0]["filename"] == \
        "alpha.pred.jsonl"
    human = next(t for t in detail["tasks"] if t["task"] == "human_eval")
    assert human["counts"]["f1"] == 10
    values = client.get(f"/api/v1/systems/{alpha}/questions?metric=f1&task=human_eval&per_page=4").get_json()
    assert values["total"] == 10 and len(values["items"]) == 4
    with app.app_context():
        stored = dict(db.session.execute(select(Prediction.question_id, Prediction.text)
                                         .where(Prediction.system_id == alpha)).all())
    assert all(stored[item["question_id"]] == item["prediction"] for item in values["items"])
    assert all(item["file"] == "alpha.pred.jsonl" for item in values["items"])
    first = values["items"][0]
    with app.app_context():
        document = db.session.scalar(select(Question.document_id).where(Question.id == first["question_id"]))
    one_document = client.get(f"/api/v1/systems/{alpha}/questions?task=human_eval&document={document}").get_json()
    assert one_document["items"] and all(item["document_title"] == first["document_title"]
                                         for item in one_document["items"])
    word = max(first["question"].split(), key=len)
    searched = client.get(f"/api/v1/systems/{alpha}/questions?task=human_eval&search={word}").get_json()
    assert first["question_id"] in {item["question_id"] for item in searched["items"]}
    assert searched["total"] <= values["total"]
    assert 'rel="next"' in client.get(f"/api/v1/systems/{alpha}/questions?task=human_eval&per_page=4").headers["Link"]
    gone = client.delete(f"/api/v1/systems/{alpha}")
    assert gone.status_code == 200 and gone.get_json()["counts"]["predictions"] == 10
    assert client.get(f"/api/v1/systems/{alpha}").status_code == 404
    assert client.get("/api/v1/systems?name=alpha").get_json()["total"] == 0


def test_questions_of_any_set_filtered_by_task_and_document(api):
    _, client = api
    every = client.get("/api/v1/questions?set=human_eval&per_page=500").get_json()
    assert every["total"] == 10 and every["items"][0]["instruction"]
    document = every["items"][0]["document_id"]
    mine = client.get(f"/api/v1/questions?set=human_eval&document={document}").get_json()["items"]
    assert mine and {q["document_id"] for q in mine} == {document} and len(mine) < every["total"]
    ids = ",".join(str(q["id"]) for q in every["items"][:3])
    assert [q["id"] for q in client.get(f"/api/v1/questions?set=ids:{ids}").get_json()["items"]] == \
        [q["id"] for q in every["items"][:3]]
    task = every["items"][0]["task"]
    assert {q["task"] for q in client.get(f"/api/v1/questions?set=human_eval&task={task}").get_json()["items"]} \
        == {task}
    bad = client.get("/api/v1/questions?set=nope")
    assert bad.status_code == 422 and bad.get_json()["errors"][0] == {
        "file": None, "line": None, "field": "set", "location": "query", "message": bad.get_json()["detail"]}


def test_jobs_are_listed_with_filters_cancelled_and_resumed(api):
    app, client = api
    with app.app_context():
        system = db.session.scalars(select(System).order_by(System.id)).first()
        queued, name = submit_metrics_job(system, enqueue=False).id, system.name  # no worker: it stays queued
    listed = client.get("/api/v1/jobs?kind=metrics&state=queued").get_json()
    assert queued in [job["id"] for job in listed["items"]] and all(j["state"] == "queued" for j in listed["items"])
    assert client.get("/api/v1/jobs?state=done").get_json()["total"] == 0
    assert client.get(f"/api/v1/jobs?system={name}").get_json()["items"][0]["id"] == queued
    cancelled = client.post(f"/api/v1/jobs/{queued}/cancel")
    assert cancelled.status_code == 200 and cancelled.get_json()["state"] == "cancelled"
    resumed = client.post(f"/api/v1/jobs/{queued}/resume")
    assert resumed.status_code == 200 and resumed.get_json()["state"] == "queued"
    again = client.post(f"/api/v1/jobs/{queued}/resume")
    assert again.status_code == 409 and again.get_json()["errors"][0]["field"] == "job_id"
    assert client.get("/api/v1/jobs?state=nope").status_code == 422


def test_the_documented_job_kinds_are_the_registered_ones(app):
    assert tuple(sorted(app.extensions["job_kinds"])) == JOB_KINDS


# -- studies -------------------------------------------------------------------------------------------------


def test_a_study_is_created_with_systems_annotators_and_an_adaptive_budget(api):
    app, client = api
    demo_study = client.get("/api/v1/studies").get_json()["items"][0]["id"]
    chosen = client.get(f"/api/v1/studies/{demo_study}").get_json()["system_ids"][:2]  # two that answer human_eval
    fixed = client.post("/api/v1/studies", json={"name": "two systems", "systems": chosen,
                                                 "annotators": ["annotator"], "overlap": 1})
    assert fixed.status_code == 201, fixed.get_json()
    assert fixed.headers["Location"] == f"/api/v1/studies/{fixed.get_json()['id']}"
    assert fixed.get_json()["system_ids"] == sorted(chosen) and fixed.get_json()["systems"] == 2
    assert fixed.get_json()["merge_identical"] is True  # the form's default
    everyone = client.post("/api/v1/studies", json={"name": "open to all", "annotators": "everyone",
                                                    "merge_identical": False}).get_json()
    assert everyone["annotators"] == "everyone" and everyone["everyone_may_score"] is True
    assert everyone["merge_identical"] is False
    with app.app_context():
        assert db.session.get(Study, everyone["id"]).merge_identical is False
    adaptive = client.post("/api/v1/studies", json={
        "name": "adaptive", "annotators": ["annotator", "researcher"], "allocation": "adaptive",
        "budget_documents": 3, "min_per_answer": 2, "calibration_documents": 1, "start_window_hours": 12,
        "max_documents_per_annotator": 2})
    assert adaptive.status_code == 201, adaptive.get_json()
    assert adaptive.get_json()["adaptive"]["budget_documents"] == 3
    assert adaptive.get_json()["adaptive"]["max_documents_per_annotator"] == 2
    for body, field in (({"name": "x1", "systems": [999999]}, "systems"),
                        ({"name": "x2", "allocation": "adaptive", "annotators": ["annotator"]}, "budget_documents"),
                        ({"name": "x3", "allocation": "adaptive", "overlap": 1, "budget_documents": 2,
                          "annotators": ["annotator"]}, "overlap"),
                        ({"name": "x4", "annotators": ["nobody"]}, "annotators"),
                        ({"name": "x5", "calibration_documents": 3}, "calibration_documents"),
                        ({"name": "x6", "policy": "burn"}, "policy"),
                        ({"name": "x7", "merge_identical": 0}, "merge_identical")):  # JSON's false, not 0
        refused = client.post("/api/v1/studies", json=body)
        assert refused.status_code == 422 and refused.get_json()["errors"][0]["field"] == field, (body, refused.json)
    with app.app_context():
        assert not db.session.scalar(select(func.count(Study.id)).where(Study.name.like("x_")))


@pytest.mark.parametrize("field,beyond,within", [
    *((name, setup.COUNT_MAX + 1, setup.COUNT_MAX) for name in setup.ADAPTIVE_COUNTS),
    *((name, setup.AMOUNT_MAX, setup.AMOUNT_MAX / 2) for name in setup.ADAPTIVE_AMOUNTS),
    *((name, 0, 1) for name in (*setup.ADAPTIVE_COUNTS, *setup.ADAPTIVE_AMOUNTS)),
    ("calibration_documents", max(setup.CALIBRATION_CHOICES) + 1, max(setup.CALIBRATION_CHOICES)),
])
def test_the_apis_adaptive_bounds_are_the_study_services(api, field, beyond, within):
    """The form, the CLI and the API refuse the same adaptive values: StudySpec's check owns the bounds, and the
    API's document states them (a client learns them from it)."""
    app, client = api
    body = {"annotators": ["annotator", "researcher"], "allocation": "adaptive", "budget_answers": 5}
    refused = client.post("/api/v1/studies", json={**body, "name": "beyond", field: beyond})
    assert refused.status_code == 422 and refused.get_json()["errors"][0]["field"] == field, refused.get_json()
    accepted = client.post("/api/v1/studies", json={**body, "name": "within", field: within})
    assert accepted.status_code == 201, accepted.get_json()
    assert accepted.get_json()["adaptive"][field] == within
    with app.app_context(), pytest.raises(setup.StudyError) as service:
        setup.create_study(setup.StudySpec(name="beyond", allocation="adaptive", **{"budget_answers": 5,
                                                                                     field: beyond}))
    assert service.value.field == field
    stated = client.get("/api/v1/openapi.json").get_json()["components"]["schemas"]["StudyCreate"]
    bounds = next(part for part in stated["properties"][field]["anyOf"] if part.get("type") != "null")
    assert {"maximum", "exclusiveMaximum", "enum"} & set(bounds), bounds


def test_a_study_takes_its_systems_and_is_deleted_with_its_scores_only_when_forced(api):
    app, client = api
    with app.app_context():
        study = db.session.scalars(select(Study).order_by(Study.id)).first().id
        from tests.support.scoring_data import generate_scores

        generate_scores(["ann1"], seed=1, study_id=study)
    first = client.get(f"/api/v1/studies/{study}").get_json()["system_ids"][0]
    for beyond in (MAX_DB_ID + 1, 2**70, 0):  # no id column holds these (2**70 overflowed SQLite: a 500)
        refused = client.put(f"/api/v1/studies/{study}/systems", json={"systems": [first, beyond]})
        assert refused.status_code == 422, refused.get_json()
        assert refused.get_json()["errors"][0]["field"].startswith("systems"), refused.get_json()
    with app.app_context():  # the service too: such an id names no system
        with pytest.raises(setup.StudyError, match="No such system id"):
            setup.set_systems(db.session.get(Study, study), [first, 2**70])
        db.session.rollback()
    chosen = client.put(f"/api/v1/studies/{study}/systems", json={"systems": [first]})
    assert chosen.status_code == 200 and chosen.get_json()["system_ids"] == [first]
    refused = client.delete(f"/api/v1/studies/{study}")
    assert refused.status_code == 409 and refused.get_json()["errors"][0]["field"] == "force"
    with app.app_context():
        kept = db.session.scalar(select(func.count(Score.id)))
    assert kept > 0
    gone = client.delete(f"/api/v1/studies/{study}?force=true")
    assert gone.status_code == 200 and gone.get_json()["scores"] == kept
    assert gone.get_json()["scores_saved_as"].endswith(".jsonl")
    assert client.get(f"/api/v1/studies/{study}").status_code == 404


# -- scores -------------------------------------------------------------------------------------------------


def _scored_study(app) -> tuple[int, str]:
    from app.services.exports import jsonl_text, score_rows
    from tests.support.scoring_data import generate_scores

    with app.app_context():
        study = db.session.scalars(select(Study).order_by(Study.id)).first().id
        generate_scores(["ann1", "ann2"], seed=3, study_id=study)
        return study, jsonl_text(score_rows(study, "all"))


def test_scores_are_imported_in_the_exports_format_all_or_nothing(api):
    app, client = api
    study, exported = _scored_study(app)
    rows = [json.loads(line) for line in exported.splitlines()]

    def send(text: str, token: str | None = None, **fields):
        headers = bearer(token) if token else {}
        return client.post(f"/api/v1/studies/{study}/scores", headers=headers, content_type="multipart/form-data",
                           data={"file": (io.BytesIO(text.encode()), "scores.jsonl"), **fields})

    same = send(exported)
    assert same.status_code == 201 and same.get_json()["unchanged"] == len(rows), same.get_json()
    changed = [dict(row) for row in rows]
    changed[4]["score"] = 1 if changed[4]["score"] != 1 else 2
    changed[0]["score"] = 1 if changed[0]["score"] != 1 else 2
    text = "".join(json.dumps(row) + "\n" for row in changed)
    with app.app_context():
        before = sorted(db.session.scalars(select(Score.value)).all())
    refused = send(text)
    assert refused.status_code == 409 and refused.get_json()["errors"][0]["line"] == 1
    bad = [dict(row) for row in changed]
    bad[7]["system"] = "nobody"
    wrong = send("".join(json.dumps(row) + "\n" for row in bad), replace="true")
    assert wrong.status_code == 422
    assert (wrong.get_json()["errors"][0]["line"], wrong.get_json()["errors"][0]["field"]) == (8, "system")
    with app.app_context():
        assert sorted(db.session.scalars(select(Score.value)).all()) == before  # nothing of either was stored
    replaced = send(text, replace="true")
    assert replaced.status_code == 201 and replaced.get_json()["replaced"] == 2
    newcomer = [{**rows[0], "annotator": "newcomer"}]
    as_researcher = send(json.dumps(newcomer[0]) + "\n")
    assert as_researcher.status_code == 422 and as_researcher.get_json()["errors"][0]["field"] == "annotator"
    as_admin = send(json.dumps(newcomer[0]) + "\n", make_token(app, "admin", "write"))
    assert as_admin.status_code == 201 and as_admin.get_json()["annotators_created"] == ["newcomer"]
    with app.app_context():
        assert db.session.scalars(select(User).where(User.username == "newcomer")).one().active is True
    listed = client.get(f"/api/v1/results/{study}/scores?per_page=500").get_json()
    assert listed["total"] == len(rows) + 1


# -- tokens ------------------------------------------------------------------------------------------------


def test_a_token_lists_and_revokes_its_accounts_tokens_only(app):
    mine = make_token(app, "researcher", "write", name="cluster")
    spare = make_token(app, "researcher", "read", name="spare")
    theirs = make_token(app, "admin", "write")
    client = app.test_client()
    listed = client.get("/api/v1/tokens", headers=bearer(mine)).get_json()["items"]
    assert [t["name"] for t in listed] == ["spare", "cluster"] and [t["current"] for t in listed] == [False, True]
    assert all(spare[:12] != t["prefix"] or t["scope"] == "read" for t in listed)
    admin_ids = [t["id"] for t in client.get("/api/v1/tokens", headers=bearer(theirs)).get_json()["items"]]
    assert client.delete(f"/api/v1/tokens/{admin_ids[0]}", headers=bearer(mine)).status_code == 404
    revoked = client.delete(f"/api/v1/tokens/{listed[0]['id']}", headers=bearer(mine))
    assert revoked.status_code == 200 and revoked.get_json()["state"] == "revoked"
    assert client.get("/api/v1/tokens", headers=bearer(spare)).status_code == 401
    assert client.get("/api/v1/tokens", headers=bearer(theirs)).status_code == 200
    annotator = make_token(app, "annotator", "read")
    assert client.get("/api/v1/tokens", headers=bearer(annotator)).status_code == 200  # every role has tokens
    assert client.delete(f"/api/v1/tokens/{listed[1]['id']}", headers=bearer(annotator)).status_code == 403
