"""LEval Studio: a local web app for evaluating long-context LLM answers."""
from __future__ import annotations

import os
from pathlib import Path
from time import perf_counter

from flask import Flask, g
from sqlalchemy import event
from sqlalchemy.engine import Engine

from app.config import REPO_ROOT, build_config, instance_path_from_env
from app.extensions import db, migrate


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

    if web:
        # The pages use every table. A command imports the models its services use (all of them,
        # through app.models), so one that touches no table, such as `summary`, starts without them.
        from app import models  # noqa: F401
    from app.services.data_versions import track_changes
    from app.services.demo_scope import install as keep_demo_apart
    from app.services.jobs.queue import install_queue
    from app.services.jobs.registry import register_job_kinds

    track_changes()
    keep_demo_apart()  # every read whose entry point chose a view (a page, the API, a command)
    # Every job kind, by import path: a worker imports a handler the first time it runs one.
    register_job_kinds(app, {
        "metrics": "app.services.metrics.job:run_metrics_job",
        "judge": "app.services.judge.job:judge_job",
        "generate": "app.services.generation.runs:generate_job",
        "rater": "app.services.rater.job:rater_job",
    })
    install_queue(app)

    from app.cli import register_cli

    register_cli(app)
    if web:
        from app.web import register_web

        register_web(app)
    return app


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
    from app.core.numbers import parse_whole_number

    value = parse_whole_number(os.environ.get("LEVAL_BUSY_TIMEOUT_MS"), maximum=24 * 3600 * 1000)
    return 15000 if value is None else value


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
