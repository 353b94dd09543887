"""Security walks over every route, so that a new route without protection fails here.

Sign-in, roles and CSRF are checked for every rule of `app.url_map`, built with the ids of
real demo rows (or a dummy value for an argument nobody named yet). Also here: debug mode,
the password hash, the sign-in rate limit across users and addresses, and static guards
against SQL built from strings and markup written from data. Cookie flags, the basic rate
limit, CSRF on sign-in and the scrypt prefix are in tests/web/test_auth.py.
"""
from __future__ import annotations

import ast
import re
import time

import pytest
from sqlalchemy import func, select
from werkzeug.routing import IntegerConverter, PathConverter

import run
from app import create_app
from app.cli import serve as serve_command
from app.extensions import db
from app.models import Document, Job, PredictionFile, Question, Study, System, User
from app.web.security import PUBLIC_ENDPOINTS
from app.services.metrics import submit_metrics_job
from tests.conftest import PASSWORDS, REPO_ROOT, AuthActions, csrf_token

# Staff areas: every endpoint of these blueprints must carry a role check that leaves annotators out.
STAFF_BLUEPRINTS = {"predictions", "jobs", "results", "judging", "admin"}
# The only endpoints open to every signed-in user; anything else must name its roles.
ANY_SIGNED_IN = {
    "home.index", "auth.logout", "annotate.resume", "annotate.study_home", "annotate.question", "annotate.done",
    "annotate.document", "annotate.save_score_api", "account.index", "account.password", "account.end_other_sessions",
}
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
PUBLIC = {"auth.login", "home.healthz", "static"}
# The token API (app/web/api) takes no session at all: walked below with sessions (all refused) and, with
# tokens of every role and scope, in tests/web/test_api_access.py.
API = "api"


@pytest.fixture
def demo(demo):
    """The shared demo fixture, with a metrics job so that the job pages have an id to visit."""
    app = demo
    with app.app_context():
        submit_metrics_job(db.session.scalars(select(System).order_by(System.id)).first())  # a job id to visit
    return app


def url_values(app) -> dict[str, object]:
    """Real ids for the arguments the routes use today."""
    with app.app_context():
        first = lambda model: db.session.scalar(select(func.min(model.id)))  # noqa: E731
        return {
            "user_id": db.session.scalar(select(User.id).where(User.username == "annotator")),
            "question_id": first(Question), "document_id": first(Document), "system_id": first(System),
            "job_id": first(Job) or 1, "prompt_id": 1, "batch_id": "0" * 32, "annotator": "annotator",
            "fmt": "csv", "filename": "css/app.css", "study_id": first(Study) or 1, "file_id": first(PredictionFile) or 1,
        }


def build_url(rule, values: dict[str, object]) -> str:
    """Fill a rule's arguments: known names get real ids, unknown ones a value their converter accepts."""
    filled = {}
    for name in rule.arguments:
        converter = rule._converters[name]
        if name in values:
            filled[name] = values[name]
        elif isinstance(converter, IntegerConverter):
            filled[name] = 1
        elif isinstance(converter, PathConverter):
            filled[name] = "x/y"
        else:
            filled[name] = "x"
    return rule.build(filled, append_unknown=False)[1]


def rules(app, *, public: bool = False, api: bool = False):
    """(endpoint, url, method) for every rule and method the app serves (the session's pages, or the token API)."""
    values = url_values(app)
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if (rule.endpoint in PUBLIC) != public or (rule.endpoint.split(".")[0] == API) != api:
            continue
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            yield rule.endpoint, build_url(rule, values), method


def required_roles(app, endpoint: str) -> tuple[str, ...] | None:
    return getattr(app.view_functions[endpoint], "required_roles", None)


def table_counts(app) -> dict[str, int]:
    with app.app_context():
        return {table.name: db.session.scalar(select(func.count()).select_from(table))
                for table in db.metadata.sorted_tables}


def signed_in(app, username: str) -> tuple:
    client = app.test_client()
    auth = AuthActions(client)
    assert auth.login(username).status_code == 302
    return client, auth


# Sign-in


def test_only_login_healthz_and_static_are_public(app, client):
    assert PUBLIC_ENDPOINTS == PUBLIC
    assert client.get("/login").status_code == 200
    assert client.get("/healthz").status_code == 200
    assert client.get("/static/css/app.css").status_code == 200


def refused_sign_in(response) -> bool:
    """A page redirects to the sign-in form; an API answers 401 in JSON."""
    if response.status_code == 302:
        return response.headers["Location"].startswith("/login?next=")
    return response.status_code == 401 and response.get_json() == {"error": "sign-in required"}


def test_every_other_route_needs_a_session(demo):
    client = demo.test_client()
    token = csrf_token(client)  # a signed-out session has a token: sign-in, not CSRF, must refuse
    walked, leaks = 0, []
    for endpoint, url, method in rules(demo):
        walked += 1
        if method == "GET":
            if not refused_sign_in(client.get(url)):
                leaks.append(f"GET {url} ({endpoint})")
            api = client.get(url, headers={"Accept": "application/json"})
            if api.status_code != 401 or api.get_json() != {"error": "sign-in required"}:
                leaks.append(f"GET {url} as JSON ({endpoint}): {api.status_code}")
        elif not refused_sign_in(client.open(url, method=method, data={"csrf_token": token},
                                             headers={"X-CSRFToken": token})):
            leaks.append(f"{method} {url} ({endpoint})")
    assert walked >= 45, "the walk must cover the whole app"
    assert not leaks, "reachable without signing in:\n" + "\n".join(leaks)


def test_the_token_api_takes_no_session_and_no_csrf_token(demo):
    """An admin's session (with a valid CSRF token) opens no API route: 401 in JSON, nothing written."""
    client, auth = signed_in(demo, "admin")
    token = auth.token()
    before = table_counts(demo)
    walked, accepted = 0, []
    for endpoint, url, method in rules(demo, api=True):
        walked += 1
        response = client.open(url, method=method, data={"csrf_token": token}, headers={"X-CSRFToken": token})
        if response.status_code != 401 or "error" not in (response.get_json() or {}):
            accepted.append(f"{method} {url} ({endpoint}): {response.status_code}")
        if "Set-Cookie" in response.headers:
            accepted.append(f"{method} {url} ({endpoint}) set a cookie")
    assert walked >= 12
    assert not accepted, "the API accepted a session:\n" + "\n".join(accepted)
    assert table_counts(demo) == before


def test_csrf_protection_exempts_exactly_the_token_api(app):
    from app.web.extensions import csrf

    assert [blueprint.name for blueprint in csrf._exempt_blueprints] == [API]
    assert not csrf._exempt_views


# Roles


def test_every_route_names_its_roles_or_is_open_to_every_signed_in_user(app):
    unchecked, staff_open = [], []
    for endpoint in app.view_functions:
        roles = required_roles(app, endpoint)
        if endpoint.split(".")[0] in STAFF_BLUEPRINTS and (not roles or "annotator" in roles):
            staff_open.append(endpoint)
        if roles is None and endpoint not in ANY_SIGNED_IN | PUBLIC:
            unchecked.append(endpoint)
    assert not staff_open, f"staff endpoints without a staff role check: {staff_open}"
    assert not unchecked, (f"endpoints without roles_required/staff_required: {unchecked} "
                           "(add the decorator, or list them in ANY_SIGNED_IN if every annotator may use them)")
    for endpoint in ("studies.show", "studies.systems", "studies.begin_again_view", "studies.delete_system"):
        assert required_roles(app, endpoint) == ("admin", "researcher")
    assert {e for e in app.view_functions if e.startswith("admin.")} and all(
        required_roles(app, e) == ("admin",) for e in app.view_functions if e.startswith("admin."))


@pytest.mark.parametrize("username, refused", [("annotator", ("admin", "researcher")), ("researcher", ("admin",))])
def test_staff_routes_answer_403_to_a_lower_role(demo, username, refused):
    client, auth = signed_in(demo, username)
    token = auth.token()
    before = table_counts(demo)
    checked, allowed = 0, []
    for endpoint, url, method in rules(demo):
        roles = required_roles(demo, endpoint)
        staff_area = username == "annotator" and endpoint.split(".")[0] in STAFF_BLUEPRINTS
        if not staff_area and (not roles or (set(roles) - set(refused))):  # this user holds one of the roles
            continue
        checked += 1
        response = client.open(url, method=method, data={"csrf_token": token}, headers={"X-CSRFToken": token})
        if response.status_code != 403:
            allowed.append(f"{method} {url} ({endpoint}): {response.status_code}")
    assert checked >= (40 if username == "annotator" else 4)
    assert not allowed, f"{username} got past the role check:\n" + "\n".join(allowed)
    assert table_counts(demo) == before


def test_staff_are_not_locked_out_of_their_pages(demo):
    client, _ = signed_in(demo, "researcher")
    refused = []
    for endpoint, url, method in rules(demo):
        if method == "GET" and "researcher" in (required_roles(demo, endpoint) or ()):
            status = client.get(url).status_code
            if status in (401, 403):
                refused.append(f"{url}: {status}")
    assert not refused


# CSRF


def test_every_write_refuses_a_request_without_a_valid_token(demo):
    client, _ = signed_in(demo, "admin")  # admin holds every role: only the token can refuse
    other_client, other_auth = signed_in(demo, "researcher")
    foreign_token = other_auth.token()  # valid, but bound to another session
    before = table_counts(demo)
    writes, accepted = 0, []
    for endpoint, url, method in rules(demo):
        if method not in WRITE_METHODS:
            continue
        writes += 1
        attempts = {
            "no token": client.open(url, method=method, data={"username": "x9", "value": "3"}),
            "no token, JSON": client.open(url, method=method, json={"question_id": 1, "label": "A", "value": 3}),
            "wrong token": client.open(url, method=method, data={"csrf_token": "forged"},
                                       headers={"X-CSRFToken": "forged"}),
            "another session's token": client.open(url, method=method, data={"csrf_token": foreign_token},
                                                   headers={"X-CSRFToken": foreign_token}),
        }
        accepted += [f"{method} {url} ({endpoint}), {how}: {r.status_code}"
                     for how, r in attempts.items() if r.status_code != 400]
    assert writes >= 15
    assert not accepted, "writes accepted without a valid CSRF token:\n" + "\n".join(accepted)
    assert table_counts(demo) == before, "a refused write changed the database"
    assert client.get("/").status_code == 200, "the refused POST /logout must not sign out"


def test_every_write_route_takes_post_only(app):
    for rule in app.url_map.iter_rules():
        assert not (rule.methods & {"PUT", "PATCH", "DELETE"}), rule  # the walks above would need another body shape


# Cookies, debug mode, passwords


def test_the_session_cookie_is_httponly_and_lax_from_the_first_page(client):
    cookie = client.get("/login").headers.get("Set-Cookie", "")
    assert cookie.startswith("session=") and "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_debug_is_off_unless_asked_for(monkeypatch, tmp_path):
    monkeypatch.delenv("FLASK_DEBUG", raising=False)
    monkeypatch.setenv("LEVAL_INSTANCE", str(tmp_path / "instance"))
    served = []
    monkeypatch.setattr(serve_command, "bootstrap", lambda **kwargs: None)
    monkeypatch.setattr(serve_command, "start_workers", lambda app, count: None)
    monkeypatch.setattr(serve_command, "run_server",
                        lambda app, host, port, *, debug=False, threads=8: served.append((host, debug, app.debug)))
    for argv in ([], ["serve"], ["--debug"]):  # `python run.py`, `python run.py serve`, `python run.py --debug`
        with pytest.raises(SystemExit) as exited:
            run.main(argv)
        assert exited.value.code in (0, None)
    assert served == [("127.0.0.1", False, False), ("127.0.0.1", False, False), ("127.0.0.1", True, False)]
    assert create_app({"INSTANCE_PATH": tmp_path / "other"}).debug is False


def test_an_unexpected_error_shows_no_traceback(tmp_path):
    app = create_app({"INSTANCE_PATH": tmp_path / "instance"})  # not TESTING: errors are handled as in production

    @app.get("/boom")
    def boom():
        raise RuntimeError("secret internals /etc/leval")

    with app.app_context():
        from flask_migrate import upgrade

        from app.services.accounts import create_user

        upgrade()
        create_user("admin", PASSWORDS["admin"], "admin")
    client = app.test_client()
    AuthActions(client).login("admin")
    response = client.get("/boom")
    body = response.get_data(as_text=True)
    assert response.status_code == 500
    assert "Traceback" not in body and "secret internals" not in body and "werkzeug" not in body.lower()
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def test_passwords_use_a_slow_salted_hash(app):
    with app.app_context():
        hashes = {user.username: user.password_hash for user in db.session.scalars(select(User))}
        user = db.session.scalars(select(User).where(User.username == "admin")).one()
        started = time.perf_counter()
        assert user.check_password(PASSWORDS["admin"]) and not user.check_password("admin-pass-124")
        per_check = (time.perf_counter() - started) / 2
    method, salt, digest = hashes["admin"].split("$")
    name, cost, block, parallel = method.split(":")
    assert name == "scrypt" and int(cost) >= 2 ** 14 and int(block) >= 8  # memory-hard: 16+ MiB per guess
    assert len(salt) >= 16 and len(digest) >= 64
    assert len({h.split("$")[1] for h in hashes.values()}) == len(hashes), "every hash has its own salt"
    assert per_check >= 0.005, f"one password check took {per_check * 1000:.1f} ms: too fast to slow down guessing"


# Sign-in rate limit (the per-user and same-address basics are in tests/web/test_auth.py)


def login_from(client, address: str, username: str, password: str):
    token = csrf_token(client)
    return client.post("/login", data={"username": username, "password": password, "csrf_token": token},
                       environ_base={"REMOTE_ADDR": address})


def test_guessing_one_account_from_many_addresses_is_still_limited(app):
    for i in range(10):
        assert login_from(app.test_client(), f"10.0.0.{i}", "researcher", "wrong-guess").status_code == 401
    blocked = login_from(app.test_client(), "10.0.1.1", "researcher", PASSWORDS["researcher"])
    assert blocked.status_code == 429 and int(blocked.headers["Retry-After"]) > 0
    assert login_from(app.test_client(), "10.0.1.1", "admin", PASSWORDS["admin"]).status_code == 302


def test_guessing_many_accounts_from_one_address_is_limited(app, tmp_path, migrated_copy):
    # LEVAL_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE (100 by default: a lab may share one address), set low
    # here: 100 refused sign-ins, each hashing a password, can outlast the minute on a busy machine.
    from app import create_app

    assert app.config["LEVAL_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE"] == 100
    limit = 12
    limited = create_app({**migrated_copy(tmp_path / "limited"), "TESTING": True,
                          "LEVAL_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE": limit})
    try:
        for i in range(limit):
            assert login_from(limited.test_client(), "10.0.2.1", f"nobody{i}", "wrong-guess").status_code == 401
        assert login_from(limited.test_client(), "10.0.2.1", "admin", PASSWORDS["admin"]).status_code == 429
        assert login_from(limited.test_client(), "10.0.2.2", "admin", PASSWORDS["admin"]).status_code == 302
    finally:
        with limited.app_context():
            db.session.remove()
            db.engine.dispose()


# The window, atomic counting, bounded storage and sharing by processes: tests/web/test_login_limits.py.


# Static guards: no SQL from strings, no markup from data


SQL_CALLS = {"text", "exec_driver_sql", "execute", "executemany", "executescript", "literal_column"}
# The one statement built with an f-string: an int from config (see test_busy_timeout_is_always_an_int).
ALLOWED_SQL = {("app/__init__.py", "PRAGMA busy_timeout=")}


def _dynamic_string(node: ast.AST) -> bool:
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.FormattedValue) for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        return any(isinstance(side, (ast.Constant, ast.JoinedStr)) and isinstance(getattr(side, "value", ""), str)
                   for side in (node.left, node.right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("format", "join") and isinstance(node.func.value, ast.Constant)
    return False


def _source(node: ast.AST) -> str:
    return ast.unparse(node)


def test_no_sql_is_built_from_strings():
    found = []
    for path in sorted((REPO_ROOT / "app").rglob("*.py")):
        relative = path.relative_to(REPO_ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in SQL_CALLS and _dynamic_string(node.args[0]):
                text = _source(node.args[0])
                if not any(relative == file and marker in text for file, marker in ALLOWED_SQL):
                    found.append(f"{relative}:{node.lineno}: {name}({text})")
    assert not found, "SQL built from strings (use bound parameters or the SQLAlchemy expression API):\n" + "\n".join(found)
    assert not [p for p in (REPO_ROOT / "app").rglob("*.py") if "import sqlite3" in p.read_text(encoding="utf-8")]


def test_the_guard_catches_sql_built_from_strings():
    for snippet in ('db.session.execute(text(f"SELECT * FROM users WHERE name = \'{name}\'"))',
                    'conn.exec_driver_sql("DELETE FROM scores WHERE id = %s" % score_id)',
                    'cursor.execute("SELECT " + column)', 'text("SELECT {}".format(column))'):
        call = next(n for n in ast.walk(ast.parse(snippet)) if isinstance(n, ast.Call)
                    and (getattr(n.func, "attr", None) or getattr(n.func, "id", None)) in SQL_CALLS
                    and _dynamic_string(n.args[0]))
        assert call is not None


def test_busy_timeout_is_always_an_int(monkeypatch):
    from app import busy_timeout_ms

    for value, expected in (("250", 250), ("1; DROP TABLE users", 15000), ("", 15000), ("-5", 15000), ("¹", 15000),
                            ("٣", 15000)):
        monkeypatch.setenv("LEVAL_BUSY_TIMEOUT_MS", value)
        assert busy_timeout_ms() == expected


def test_templates_and_scripts_never_write_data_as_markup():
    for path in (REPO_ROOT / "templates").rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\|\s*safe\b|autoescape\s+false|Markup\(", text), path
    for path in (REPO_ROOT / "static" / "js").rglob("*.js"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function", text), path
    assert not (REPO_ROOT / "templates").joinpath("base.html").read_text(encoding="utf-8").count("<script>")
