"""Object-level authorization over every route of the token API: no token reaches an object it must not.

Every rule of the API that takes an argument is walked (from the app's url_map: a new route is in at once, and
one naming a kind of object the walk cannot fill fails it). The world: the demo beside real data (a study set
imported as real), so the demo is kept apart in every read; two accounts' tokens and uploads. Refused, with
403 or 404 and nothing stored (a digest of every table before and after each route × account):

- a researcher's write token × every object of the demo (its study, system, metrics job, prediction file):
  the API reads the real data, and demo objects are not there for it; × ids no row has;
- the same token × another account's token and upload (the tokens page and the upload page show each
  account only its own);
- an annotator's write token × every real object (staff routes; its own tokens' routes answer 404 for the
  researcher's token);
- a read token × every real object of a write route.

Positive controls then show the same fillers reach the real objects, so the refusals are the rule, not a
broken URL. Writes are sent with a body each route takes (DELETE with force=true), so the refusal is about
the object, never the body.
"""
from __future__ import annotations

import hashlib
import io
import itertools

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import (
    Document,
    Job,
    PredictionFile,
    Question,
    Study,
    System,
    UploadBatch,
    User,
)
from app.services.api_tokens import create_token
from app.services.importers import import_path
from app.services.metrics import submit_metrics_job
from app.services.studies.setup import StudySpec, create_study
from tests.support.api import api_rules, bearer, make_token
from tests.support.study_data import write_study_set

DENIED = (403, 404)
MISSING = 2_000_000_000
KINDS = {"study_id", "system_id", "job_id", "file_id", "token_id", "upload_id"}
# Tables a refused request may write: a token's last use (and that table's change counter, below).
UNWATCHED = {"api_tokens"}


def body_for(endpoint: str, real: dict) -> dict:
    """What each write route is sent: a body it takes (validation passes), so only the object can refuse it."""
    if endpoint == "api.import_scores":
        row = b'{"annotator": "annotator", "system": "x", "query": "q", "score": 3}\n'
        return {"data": {"file": (io.BytesIO(row), "scores.jsonl")}, "content_type": "multipart/form-data"}
    if endpoint == "api.set_systems":
        return {"json": {"systems": [real["system_id"]]}}
    return {}


@pytest.fixture
def world(demo, tmp_path):
    """Demo objects (kept apart from the real data), real ones, and two accounts' tokens and uploads."""
    write_study_set(tmp_path / "set", documents=2, questions_each=2)
    with demo.app_context():
        assert not import_path(tmp_path / "set").failed  # real data: the API now reads it, not the demo
    researcher, admin = make_token(demo, "researcher", "write"), make_token(demo, "admin", "write")
    real_file = (tmp_path / "set" / "north-1b.pred.jsonl").read_bytes()  # `system` renames it per account
    uploads = {}
    for name, secret in (("researcher", researcher), ("admin", admin)):
        answer = demo.test_client().post("/api/v1/predictions", headers=bearer(secret),
                                         content_type="multipart/form-data",
                                         data={"file": (io.BytesIO(real_file), "north-1b.pred.jsonl"),
                                               "system": f"{name}-model"})
        assert answer.status_code == 201, answer.get_json()
        uploads[name] = answer.get_json()["upload"]
    with demo.app_context():
        def first(model, demo_side: bool):
            return db.session.scalar(select(model.id).where(model.is_demo.is_(demo_side)).order_by(model.id))

        real_system = first(System, False)
        questions = list(db.session.scalars(select(Question.id).join(Document, Document.id == Question.document_id)
                                            .where(Document.is_demo.is_(False)).order_by(Question.id)))
        real_study = create_study(StudySpec(name="real study", question_ids=questions)).id
        for system_id in (real_system, first(System, True)):
            submit_metrics_job(db.session.get(System, system_id), enqueue=False)
        users = dict(db.session.execute(select(User.username, User.id)).all())
        spare = create_token(db.session.get(User, users["researcher"]), scope="read", name="spare").token.id
        theirs = create_token(db.session.get(User, users["admin"]), scope="read", name="theirs").token.id
        file_of = lambda demo_side: db.session.scalar(
            select(PredictionFile.id).join(System).where(System.is_demo.is_(demo_side)).order_by(PredictionFile.id))
        real = {"study_id": real_study, "system_id": real_system, "job_id": first(Job, False),
                "file_id": file_of(False), "token_id": spare, "upload_id": uploads["researcher"]}
        hidden = {"study_id": [first(Study, True), MISSING], "system_id": [first(System, True), MISSING],
                  "job_id": [first(Job, True), MISSING], "file_id": [file_of(True), MISSING],
                  "token_id": [theirs, MISSING], "upload_id": [uploads["admin"], "0" * 32]}
        assert all(real.values()) and all(all(ids) for ids in hidden.values()), (real, hidden)
        assert db.session.get(UploadBatch, uploads["admin"]) is not None
    return demo, real, hidden, {"researcher": researcher, "annotator": make_token(demo, "annotator", "write"),
                                "read": make_token(demo, "researcher", "read")}


def digests(app) -> dict[str, str]:
    with app.app_context():
        found = {}
        for table in db.metadata.sorted_tables:
            if table.name in UNWATCHED:
                continue
            digest = hashlib.sha256()
            for row in db.session.execute(select(table).order_by(*table.primary_key.columns)):
                # data_versions counts each commit's tables ("api_tokens#3"): a token's first use bumps its own.
                if table.name == "data_versions" and row.table_name.split("#")[0] in UNWATCHED:
                    continue
                digest.update(repr(tuple(row)).encode())
            found[table.name] = digest.hexdigest()
        db.session.remove()
        return found


def send(client, rule, method: str, values: dict, secret: str, real: dict):
    url = rule.build(values, append_unknown=False)[1] + ("?force=true" if method == "DELETE" else "")
    return client.open(url, method=method, headers=bearer(secret), **(body_for(rule.endpoint, real)
                                                                       if method in ("POST", "PUT") else {}))


def test_no_token_reaches_an_object_it_must_not_through_any_api_route(world):
    app, real, hidden, tokens = world
    client = app.test_client()
    routes = [(rule, method) for rule, method in api_rules(app) if rule.arguments]
    unknown = sorted({name for rule, _ in routes for name in rule.arguments} - KINDS)
    assert not unknown, f"the walk cannot fill {unknown}: teach it the objects each account must not reach"
    leaks, refused, walked = [], 0, set()
    for rule, method in routes:
        view = app.view_functions[rule.endpoint]
        names = sorted(rule.arguments)
        cases = []  # (account, values) that must be refused
        for values in itertools.product(*(hidden[name] for name in names)):
            cases.append(("researcher", dict(zip(names, values))))
        # One argument hidden, the others real: each object is checked on its own.
        for name in names:
            for value in hidden[name]:
                cases.append(("researcher", {**{n: real[n] for n in names}, name: value}))
        if "annotator" not in view.required_roles:
            cases.append(("annotator", {n: real[n] for n in names}))
        elif "token_id" in names:
            cases.append(("annotator", {n: real[n] for n in names}))  # the researcher's token is not its own
        if view.api_write:
            cases.append(("read", {n: real[n] for n in names}))
        for account, values in cases:
            before = digests(app)
            answer = send(client, rule, method, values, tokens[account], real)
            refused += 1
            walked.add((rule.rule, method))
            if answer.status_code not in DENIED:
                leaks.append(f"{account}: {method} {rule.rule} {values} answered {answer.status_code}")
            changed = [name for name, digest in digests(app).items() if before[name] != digest]
            if changed:
                leaks.append(f"{account}: {method} {rule.rule} {values} changed {changed}")
    print(f"\nAPI object walk: {len(walked)} id-taking operations, {refused} refused requests")
    assert not leaks, f"{len(leaks)} requests reached what they should not:\n" + "\n".join(leaks)
    assert walked == {(rule.rule, method) for rule, method in routes}  # every id-taking route, each refused
    controls(app, real, tokens)


def controls(app, real: dict, tokens: dict) -> None:
    """The researcher's token reads every real object the walk filled (and may revoke its own spare token)."""
    client = app.test_client()
    for path in ("/api/v1/studies/{study_id}", "/api/v1/systems/{system_id}", "/api/v1/jobs/{job_id}",
                 "/api/v1/uploads/{upload_id}", "/api/v1/results/{study_id}"):
        answer = client.get(path.format(**real), headers=bearer(tokens["researcher"]))
        assert answer.status_code == 200, (path, answer.get_json())
    revoked = client.delete(f"/api/v1/tokens/{real['token_id']}", headers=bearer(tokens["researcher"]))
    assert revoked.status_code == 200 and revoked.get_json()["state"] == "revoked"
