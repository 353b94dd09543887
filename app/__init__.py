"""LEval Studio: a local web app for evaluating long-context LLM answers."""
from __future__ import annotations

import os
from pathlib import Path
from time import perf_counter

from flask import Flask, g, request
from sqlalchemy import event
from sqlalchemy.engine import Engine

from app.config import REPO_ROOT, build_config, instance_path_from_env
from app.extensions import csrf, db, login_manager, migrate

from app.version import __version__


def create_app(config: dict | None = None, *, web: bool = True) -> Flask:
    """Build the Flask app; `config` overrides defaults (tests pass INSTANCE_PATH here).

    `web=False` leaves out the pages (blueprints, sign-in, templates): the command line uses
    it for commands that serve nothing, so they start faster.
    """
    config = dict(config or {})
    instance = Path(config.pop("INSTANCE_PATH", None) or instance_path_from_env()).resolve()
    instance.mkdir(parents=True, exist_ok=True)
    app = Flask(
        __name__,
        instance_path=str(instance),
        template_folder=str(REPO_ROOT / "templates"),
        static_folder=str(REPO_ROOT / "static"),
    )
    app.config.update(build_config(instance, config))
    Path(app.config["UPLOAD_FOLDER"]).mkdir(parents=True, exist_ok=True)

    if web:
        _register_server_timing(app)  # first, so its clock covers the CSRF and sign-in checks too
    db.init_app(app)
    migrate.init_app(app, db, directory=str(REPO_ROOT / "migrations"), render_as_batch=True)

    from app import models  # noqa: F401  (the tables)
    from app.services.data_versions import track_changes
    from app.services.jobs.registry import register_job_kinds
    from app.services.jobs.worker import make_huey

    track_changes()
    # Every job kind, by import path: a worker imports a handler the first time it runs one.
    register_job_kinds(app, {
        "metrics": "app.services.metric_scores.job:run_metrics_job",
        "judge": "app.services.judge_runs.job:judge_job",
        "generate": "app.services.generation.runs:generate_job",
        "rater": "app.services.rater_runs.job:rater_job",
    })
    make_huey(app)

    from app.cli import register_cli

    register_cli(app)
    if web:
        _register_web(app)
    return app


def _register_web(app: Flask) -> None:
    """Sign-in, CSRF, security headers, error pages and one blueprint per area."""
    csrf.init_app(app)
    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    login_manager.login_message = "Please sign in to continue."

    from app import (
        admin, annotate, auth, authoring, core, generation, jobs, judging, leaderboard, lveval, predictions, results,
        studies,
    )
    from app.errors import register_error_handlers
    from app.routing import DbIdConverter
    from app.security import init_security

    from app.services.login_limits import LoginLimiter

    app.extensions["login_limiter"] = LoginLimiter(
        limit=app.config.get("LEVAL_LOGIN_FAILURES_PER_MINUTE", 10), window_seconds=60.0
    )
    init_security(app)
    register_error_handlers(app)
    app.url_map.converters["int"] = DbIdConverter  # before any rule: ids past 2^63-1 match no route
    # Every area's URL prefix, here and nowhere else.
    areas = ((core, ""), (auth, ""), (annotate, "/annotate"), (admin, "/admin"), (studies, "/studies"),
             (predictions, "/predictions"), (jobs, "/jobs"), (leaderboard, "/leaderboard"), (lveval, "/lveval"),
             (results, "/results"), (judging, "/judge"), (generation, "/generate"), (authoring, "/author"))
    for area, prefix in areas:
        app.register_blueprint(area.bp, url_prefix=prefix)
    _register_template_helpers(app)


NAV_ITEMS = (
    ("annotate.resume", "Annotate", False),
    ("studies.index", "Studies", True),
    ("predictions.index", "Predictions", True),
    ("jobs.index", "Jobs", True),
    ("leaderboard.index", "Leaderboard", True),
    ("lveval.index", "LV-Eval", True),
    ("results.human", "Results", True),
    ("judging.index", "Judge", True),
    ("generation.index", "Generate", True),
)


def _register_template_helpers(app: Flask) -> None:
    def nav_is_current(endpoint: str) -> bool:
        """Mark the nav item whose area (blueprint) this page belongs to."""
        current = request.endpoint or ""
        return current.split(".")[0] == endpoint.split(".")[0]

    app.jinja_env.globals.update(
        app_version=__version__, nav_items=NAV_ITEMS, nav_is_current=nav_is_current
    )


def _register_server_timing(app: Flask) -> None:
    """Report each request's time in the app as a Server-Timing header (benchmarks read it)."""

    @app.before_request
    def _start_clock():
        g.request_started = perf_counter()

    @app.after_request
    def _server_timing(response):
        started = g.pop("request_started", None)
        if started is not None:
            response.headers["Server-Timing"] = f"app;dur={(perf_counter() - started) * 1000:.2f}"
        return response


def busy_timeout_ms() -> int:
    """How long a connection waits for another writer before 'database is locked'."""
    value = os.environ.get("LEVAL_BUSY_TIMEOUT_MS", "15000")
    return int(value) if value.isdigit() else 15000


@event.listens_for(Engine, "connect")
def _sqlite_pragmas(dbapi_connection, connection_record) -> None:
    """Turn on WAL, foreign keys and a busy timeout for every SQLite connection."""
    module = type(dbapi_connection).__module__
    if "sqlite" not in module:
        return
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms()}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()
