"""Helpers for tests and benchmarks against a real server: a browser-like HTTP session and a prepared instance."""
from __future__ import annotations

import http.client
import json
import os
import re
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

CSRF_RE = re.compile(r'name="csrf-token" content="([^"]+)"')
ANSWERS_RE = re.compile(r'data-label="([A-Z]+)" data-answer="([0-9a-f]{64})"')
QUESTION_RE = re.compile(r"/annotate/\d+/q/(\d+)")
STUDY_RE = re.compile(r"/annotate/(\d+)/")
TIMING_RE = re.compile(r"dur=([0-9.]+)")
SHARED_PASSWORD = "live-pass-1234"
ADMIN = "live-admin"


class HttpSession:
    """One browser-like client: a keep-alive connection, the session cookie and the page's CSRF token."""

    def __init__(self, base_url: str, timeout: float = 30):
        parts = urlsplit(base_url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        self.cookies: dict[str, str] = {}
        self.token = ""
        self.study_id: int | None = None
        self.shown: dict[tuple[int, str], str] = {}  # (question, label) -> sha256 of the text the page showed

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        """Return (status, body bytes, round trip ms, server ms from Server-Timing, response headers)."""
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        started = time.perf_counter()
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        elapsed = (time.perf_counter() - started) * 1000
        for header in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        timing = TIMING_RE.search(response.headers.get("Server-Timing", ""))
        return response.status, data, elapsed, float(timing.group(1)) if timing else None, response.headers

    def sign_in(self, username: str, password: str = SHARED_PASSWORD, *, patience: float = 30.0) -> None:
        """Sign in; on 429 (many sign-ins at once from one address, as in a lab behind one NAT) wait and retry."""
        deadline = time.monotonic() + patience
        while True:
            status, page, *_ = self.request("GET", "/login")
            self.token = CSRF_RE.search(page.decode()).group(1)
            status, *_ = self.post_form("/login", {"username": username, "password": password})
            if status == 302:
                return
            if status != 429 or time.monotonic() > deadline:
                raise RuntimeError(f"sign-in failed for {username}: {status}")
            time.sleep(0.5)

    def post_form(self, path: str, fields: dict):
        body = urlencode({**fields, "csrf_token": self.token}).encode()
        return self.request("POST", path, body, {"Content-Type": "application/x-www-form-urlencoded"})

    def page(self, path: str) -> str:
        """GET a page that must answer 200, keeping its CSRF token for the next write."""
        status, data, *_ = self.request("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status}")
        text = data.decode()
        self.token = CSRF_RE.search(text).group(1)
        return text

    def study(self) -> int:
        """The study /annotate/ sends this annotator to (their only open one)."""
        if self.study_id is None:
            status, _, _, _, headers = self.request("GET", "/annotate/")
            match = STUDY_RE.search(headers.get("Location", "")) if status == 302 else None
            if match is None:
                raise RuntimeError(f"no single open study for this annotator (GET /annotate/ answered {status})")
            self.study_id = int(match.group(1))
        return self.study_id

    def save(self, question_id: int, label: str, value: int, round_number: int = 1):
        """POST one score as the question page's script does; returns request()'s tuple."""
        body = json.dumps({"study": self.study(), "question_id": question_id, "label": label, "value": value,
                           "round": round_number, "answer": self.shown.get((question_id, label), "0" * 64)}).encode()
        return self.request("POST", "/annotate/api/score", body,
                            {"Content-Type": "application/json", "X-CSRFToken": self.token})

    def answers(self, question_ids: list[int]) -> list[tuple[int, str]]:
        """Open each question page (which fixes this annotator's answer order) and list its (question, label)s."""
        found = []
        for question_id in question_ids:
            for label, sha in ANSWERS_RE.findall(self.page(f"/annotate/{self.study()}/q/{question_id}")):
                self.shown[(question_id, label)] = sha
                found.append((question_id, label))
        return found

    def close(self) -> None:
        self.connection.close()


def prepare_instance(instance: Path, *, annotators: list[str] = (), demo: bool = True,
                     folders: tuple[Path, ...] = ()) -> None:
    """Migrate, load the demo (its own open study) and `folders`, create ADMIN and the annotators.

    When the folders bring human-evaluation questions, they become an open study of their own.
    Every account gets SHARED_PASSWORD through one scrypt hash: hashing each would only slow the set-up.
    """
    from flask_migrate import upgrade
    from sqlalchemy import insert

    from app import create_app
    from app.extensions import db
    from app.models import User
    from app.services.accounts import create_user
    from app.services.demo import load_demo
    from app.services.importers import import_path
    from app.services.studies.setup import StudySpec, create_study, subset_questions

    app = create_app({"INSTANCE_PATH": instance})
    with app.app_context():
        upgrade()
        if demo:
            assert not load_demo().failed
        for folder in folders:
            report = import_path(folder)
            assert not report.failed, report.failed
        if subset_questions():
            create_study(StudySpec(name="L-Eval human evaluation", status="open"))
        template = create_user(ADMIN, SHARED_PASSWORD, "admin")
        if annotators:
            db.session.execute(insert(User), [
                {"username": name, "password_hash": template.password_hash, "role": "annotator", "active": True}
                for name in annotators
            ])
            db.session.commit()
        db.session.remove()
        db.engine.dispose()


def human_eval_questions(session: HttpSession) -> list[int]:
    """The question ids an annotator's workload lists, in order (from the finish page)."""
    return sorted({int(q) for q in QUESTION_RE.findall(session.page(f"/annotate/{session.study()}/done"))})


def instance_database_url(instance: Path) -> str:
    """The database a server on `instance` uses: LEVAL_DATABASE_URL (PostgreSQL runs), else the instance's file."""
    return os.environ.get("LEVAL_DATABASE_URL") or f"sqlite:///{Path(instance) / 'leval.db'}"


class InstanceDatabase:
    """Raw SQL on an instance's database, SQLite or PostgreSQL, with sqlite3's '?' placeholders.

    `with instance_database(path) as con: con.execute(sql, params).fetchall()`; commits on leaving.
    """

    def __init__(self, url: str):
        from sqlalchemy import create_engine

        self.engine = create_engine(url)
        self.connection = self.engine.connect()
        self.postgres = self.engine.dialect.name == "postgresql"

    def execute(self, sql: str, params: tuple | list = ()):
        if self.postgres:
            sql = sql.replace("%", "%%").replace("?", "%s")
        return self.connection.exec_driver_sql(sql, tuple(params))

    def close(self) -> None:
        self.connection.commit()
        self.connection.close()
        self.engine.dispose()

    def __enter__(self) -> "InstanceDatabase":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def instance_database(instance: Path) -> InstanceDatabase:
    return InstanceDatabase(instance_database_url(instance))
