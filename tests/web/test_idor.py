"""IDOR walk: no account reaches an object it should not, through any route that takes an id.

Every rule of `app.url_map` whose path takes an argument is walked, plus the APIs that take ids in
their JSON body (BODY_ID_ROUTES), so a new route is covered as soon as it exists; an argument the
walk cannot fill fails the test, and so does an annotator-reachable write it does not know.

Roles × objects (the world of tests/support/access_world.py, on the demo):
- staff routes (roles_required): each annotator role — ada and ben (on the restricted study), rex
  (removed from it), `annotator` (never on it) — × real objects of every kind the route names
  (study, question, document, system, user, job, prompt, run, pair, upload file, upload batch,
  annotator name); the researcher × the admin-only routes.
- annotator routes: each annotator role × every study, (study, question) pair and document it
  must not reach: draft and closed studies, the restricted study for rex and `annotator`, the
  other annotator's questions under overlap, questions of other studies, documents in no study
  or only in those, ids no row has; the score API with the body the page would send for each
  such pair (for rex, the very save his old page would make).
Every one must answer 403 or 404 (never 200, a redirect or a 500) and leave every table's rows as
they were: a digest of each table before and after each request, GETs included, since the
annotator's pages open rounds and views. Positive controls then show the same fillers reach what
each annotator may reach. The walk prints its counts (pytest -s); when written: 46 id-taking routes
(45 by path, 1 by body) × 5 accounts (4 annotators, 1 researcher) = 186 route × account pairs,
859 refused requests over their objects, and 20 allowed requests as controls.
"""
from __future__ import annotations

import hashlib
import itertools

import pytest
from flask import url_for
from sqlalchemy import func, select

from app.extensions import db
from app.models import Document, GenerationRun, PredictionFile, System, User
from app.services.api_tokens import create_token
from app.services.authoring import create_pair
from app.services.generation.prompt_versions import ensure_default as ensure_generation_prompt
from app.services.judge.prompt_versions import ensure_default_prompt
from app.services.metrics import submit_metrics_job
from app.services.rater.prompts import ensure_default_rater_prompt
from app.web.security import PUBLIC_ENDPOINTS
from tests.support.access_world import ANNOTATORS, World, build_world, save_body, sign_in
from tests.support.predictions import batch_id, demo_file, post_upload

DENIED = (403, 404)
MISSING = 2_000_000_000  # an id no row has
# APIs that take ids in their JSON body rather than their path.
BODY_ID_ROUTES = {"annotate.save_score_api"}
# Writes a signed-in account may make that name no object.
NO_ID_WRITES = {"auth.logout", "account.password", "account.end_other_sessions"}  # each acts on the account signed in
# Path arguments that are not ids but still need a value.
NOT_IDS = {"fmt": ["csv"], "filename": ["css/app.css"]}
ROLE = {"researcher": "researcher"}  # every other account of the walk is an annotator
# The id arguments staff routes take, each filled by staff_objects with real rows.
# token_id: every role may revoke its own tokens; another account's is refused as unknown (tests/web/test_tokens_page.py).
STAFF_KINDS = {"study_id", "question_id", "document_id", "system_id", "user_id", "job_id", "prompt_id", "run_id",
               "pair_id", "file_id", "batch_id", "annotator", "token_id", *NOT_IDS}
# The argument sets of annotator routes, each filled by annotator_cases with what each annotator must not reach.
ANNOTATOR_ARGUMENTS = {frozenset({"study_id"}), frozenset({"study_id", "question_id"}), frozenset({"document_id"})}


def walked_by_session(endpoint: str) -> bool:
    """Every route but the public ones and the token API (no session opens it: tests/web/test_api_access.py walks
    it with every role's tokens)."""
    return endpoint not in PUBLIC_ENDPOINTS and not endpoint.startswith("api.")


@pytest.fixture
def world(demo, tmp_path):
    return build_world(demo, tmp_path / "study-set")


def staff_objects(app, world: World) -> dict[str, list]:
    """Real objects of every kind a staff route names, made with the app's own services."""
    client, auth = sign_in(app, "researcher")
    staged = batch_id(post_upload(client, auth, [("walk-5b.pred.jsonl",
                                                  demo_file("exam_eval/terse-13b/quality.pred.jsonl", "walk-5b"))]))
    with app.app_context():
        system = db.session.scalars(select(System).order_by(System.id)).first()
        job = submit_metrics_job(system)
        document = db.session.get(Document, world.document_of[world.questions["restricted"][0]])
        quote = document.text.split("\n")[0][:40]
        start = document.text.index(quote)
        researcher = db.session.scalars(select(User).where(User.username == "researcher")).one()
        pair = create_pair(document, "What is the first line?", "The first line.",
                           [{"start": start, "end": start + len(quote), "quote": quote}], researcher)
        generation_prompt = ensure_generation_prompt()
        run = GenerationRun(system_name="walk-run", prompt_id=generation_prompt.id, created_by_id=researcher.id)
        db.session.add(run)
        db.session.commit()
        return {
            "study_id": sorted(world.studies.values()),
            "question_id": [world.questions["restricted"][0], world.questions["demo"][0]],
            "document_id": [document.id, world.document_of[world.questions["demo"][0]]],
            "system_id": [system.id],
            "user_id": [world.users["ada"], world.users["admin"]],
            "job_id": [job.id],
            "prompt_id": sorted({ensure_default_prompt().id, ensure_default_rater_prompt().id, generation_prompt.id}),
            "run_id": [run.id],
            "pair_id": [pair.id],
            "file_id": [db.session.scalar(select(func.min(PredictionFile.id)))],
            "batch_id": [staged],
            "token_id": [create_token(db.session.get(User, world.users["admin"]), scope="read").token.id],
            "annotator": ["ada"],
            **NOT_IDS,
        }


def uncovered(app) -> list[str]:
    """The routes the walk could not fill or does not know to walk: each must be taught to it."""
    found = []
    for rule in app.url_map.iter_rules():
        if not walked_by_session(rule.endpoint):
            continue
        roles = getattr(app.view_functions[rule.endpoint], "required_roles", None)
        if not rule.arguments:
            if roles is None and "POST" in rule.methods and rule.endpoint not in BODY_ID_ROUTES | NO_ID_WRITES:
                found.append(f"{rule.endpoint}: an annotator can write through it; add it to BODY_ID_ROUTES "
                             "(and fill its ids) or NO_ID_WRITES")
        elif roles is not None and not set(rule.arguments) <= STAFF_KINDS:
            found.append(f"{rule.endpoint}: no objects to fill {', '.join(sorted(set(rule.arguments) - STAFF_KINDS))}")
        elif roles is None and frozenset(rule.arguments) not in ANNOTATOR_ARGUMENTS:
            found.append(f"{rule.endpoint}: an annotator route taking {sorted(rule.arguments)}; tell the walk which "
                         "of those objects each annotator must not reach")
    return found


def test_a_route_the_walk_cannot_fill_fails_it(app):
    """A new staff route naming an unknown kind of id, or an annotator route or write the walk does not know."""
    from app.web.security import roles_required, staff_required

    assert uncovered(app) == []
    app.add_url_rule("/studies/gadgets/<int:gadget_id>", "studies.gadget", staff_required(lambda gadget_id: ""))
    app.add_url_rule("/admin/keys/<int:key_id>", "admin.key", roles_required("admin")(lambda key_id: ""))
    app.add_url_rule("/annotate/<int:study_id>/notes/<int:note_id>", "annotate.note", lambda study_id, note_id: "")
    app.add_url_rule("/annotate/api/flag", "annotate.flag", lambda: "", methods=["POST"])
    assert [line.split(":")[0] for line in uncovered(app)] == [
        "studies.gadget", "admin.key", "annotate.note", "annotate.flag"]


def refused_pairs(world: World, username: str) -> list[tuple[int, int]]:
    allowed = world.allowed_pairs(username)
    pairs = [pair for pair in world.every_pair() if pair not in allowed]
    return pairs + [(MISSING, world.questions["demo"][0]), (world.studies["demo"], MISSING)]


def annotator_cases(world: World, username: str, arguments: frozenset[str], *, allowed: bool = False) -> list[dict]:
    """Path values an annotator must not reach (allowed=True: one they may), for each of ANNOTATOR_ARGUMENTS."""
    if arguments == {"study_id"}:
        studies = sorted(world.allowed_studies(username))
        refused = sorted(set(world.studies.values()) - set(studies)) + [MISSING]
        return [{"study_id": s} for s in (studies[-1:] if allowed else refused)]
    if arguments == {"study_id", "question_id"}:
        pairs = sorted(world.allowed_pairs(username))[-1:] if allowed else refused_pairs(world, username)
        return [{"study_id": s, "question_id": q} for s, q in pairs]
    if arguments == {"document_id"}:
        may = world.allowed_documents(username)
        documents = sorted(may)[-1:] if allowed else [d for d in world.documents if d not in may] + [MISSING]
        return [{"document_id": d} for d in documents]
    raise AssertionError(f"annotator_cases does not know {sorted(arguments)}: see ANNOTATOR_ARGUMENTS")


def url_of(app, endpoint: str, **values) -> str:
    with app.test_request_context():
        return url_for(endpoint, **values)


def digests(app) -> dict[str, str]:
    """A digest of every table's rows, in primary-key order."""
    with app.app_context():
        found = {}
        for table in db.metadata.sorted_tables:
            digest = hashlib.sha256()
            for row in db.session.execute(select(table).order_by(*table.primary_key.columns)):
                digest.update(repr(tuple(row)).encode())
            found[table.name] = digest.hexdigest()
        db.session.remove()
        return found


class Walk:
    """Sends requests as several signed-in accounts and collects what got through.

    Each batch (one route, one account, all its objects) is framed by table digests: a refused
    request must store nothing, and a digest per request would cost minutes.
    """

    def __init__(self, app, usernames):
        self.app = app
        self.clients = {}
        for name in usernames:
            client, auth = sign_in(app, name)
            self.clients[name] = (client, auth.token())
        self.refused = 0
        self.leaks: list[str] = []
        self.seen: set[tuple[str, str]] = set()  # (endpoint, account)

    def send(self, username: str, method: str, url: str, *, body: dict | None = None):
        client, token = self.clients[username]
        if body is not None:
            return client.open(url, method=method, json=body, headers={"X-CSRFToken": token})
        return client.open(url, method=method, data={"csrf_token": token} if method == "POST" else None,
                           headers={"X-CSRFToken": token})

    def refuse_all(self, username: str, endpoint: str, requests: list[tuple[str, str, dict | None]]) -> None:
        """Send (method, url, JSON body or None) as `username`; each must be refused, all together store nothing."""
        before = digests(self.app)
        for method, url, body in requests:
            response = self.send(username, method, url, body=body)
            if response.status_code not in DENIED:
                self.leaks.append(f"{username}: {method} {url} ({endpoint}){' ' + str(body) if body else ''} "
                                  f"answered {response.status_code}")
        after = digests(self.app)
        changed = sorted(name for name in before if before[name] != after[name])
        if changed:
            urls = "; ".join(sorted({f"{method} {url}" for method, url, _ in requests}))
            self.leaks.append(f"{username} on {endpoint} changed {', '.join(changed)} ({urls})")
        self.refused += len(requests)
        self.seen.add((endpoint, username))


def test_no_account_reaches_an_object_it_should_not_by_any_id(world, demo):
    app = demo
    staff = staff_objects(app, world)
    walk = Walk(app, ANNOTATORS + ("researcher",))
    unknown = uncovered(app)
    assert not unknown, "the walk cannot cover:\n" + "\n".join(unknown)
    assert set(staff) == STAFF_KINDS
    id_routes = set()
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        endpoint = rule.endpoint
        if not walked_by_session(endpoint) or not rule.arguments:
            continue
        roles = getattr(app.view_functions[endpoint], "required_roles", None)
        methods = sorted(rule.methods - {"HEAD", "OPTIONS"})
        id_routes.add(endpoint)
        if roles is not None:
            names = sorted(rule.arguments)
            cases = [dict(zip(names, values)) for values in itertools.product(*(staff[n] for n in names))]
            requests = [(method, rule.build(values, append_unknown=False)[1], None)
                        for values, method in itertools.product(cases, methods)]
            for username in ANNOTATORS + ("researcher",):
                if ROLE.get(username, "annotator") not in roles:
                    walk.refuse_all(username, endpoint, requests)
            continue
        for username in ANNOTATORS:
            cases = annotator_cases(world, username, frozenset(rule.arguments))
            walk.refuse_all(username, endpoint, [(method, rule.build(values, append_unknown=False)[1], None)
                                                 for values, method in itertools.product(cases, methods)])
    for endpoint in sorted(BODY_ID_ROUTES):
        id_routes.add(endpoint)
        url = url_of(app, endpoint)
        for username in ANNOTATORS:
            bodies = [save_body(app, world.users[username], study_id, question_id, value=1)
                      for study_id, question_id in refused_pairs(world, username)]
            walk.refuse_all(username, endpoint, [("POST", url, body) for body in bodies])

    allowed = positive_controls(app, world, walk)
    accounts = {username for _, username in walk.seen}
    print(f"\nIDOR walk: {len(id_routes)} id-taking routes ({len(id_routes) - len(BODY_ID_ROUTES)} by path, "
          f"{len(BODY_ID_ROUTES)} by body) × {len(accounts)} accounts, {len(walk.seen)} route × account pairs, "
          f"{walk.refused} refused requests; {allowed} allowed requests as controls")
    assert not walk.leaks, f"{len(walk.leaks)} requests reached what they should not:\n" + "\n".join(walk.leaks)
    assert len(id_routes) >= 46 and accounts == set(ANNOTATORS) | {"researcher"} and walk.refused >= 800


def positive_controls(app, world: World, walk: Walk) -> int:
    """The fillers reach what each annotator may reach: the refusals above are the rule, not a broken URL."""
    sent = 0
    for username in ANNOTATORS:
        for endpoint in ("annotate.study_home", "annotate.done", "annotate.question", "annotate.document"):
            (rule,) = app.url_map.iter_rules(endpoint)
            (values,) = annotator_cases(world, username, frozenset(rule.arguments), allowed=True)
            if endpoint == "annotate.question":
                mine = values
            response = walk.send(username, "GET", url_of(app, endpoint, **values))
            assert response.status_code in (200, 302), (username, endpoint, values, response.status_code)
            sent += 1
        saved = walk.send(username, "POST", "/annotate/api/score",
                          body=save_body(app, world.users[username], mine["study_id"], mine["question_id"], value=4))
        assert saved.status_code == 200 and saved.get_json()["saved"], (username, saved.get_json())
        sent += 1
    return sent
