"""The pages: Flask only, one module per blueprint; each view parses, authorises, calls a service and renders."""
from __future__ import annotations

from pathlib import Path

from flask import Flask, request

from app.core.version import __version__
from app.web.extensions import csrf, login_manager


def register_web(app: Flask) -> None:
    """Sign-in, CSRF, security headers, error pages and one blueprint per area."""
    csrf.init_app(app)
    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    login_manager.login_message = "Please sign in to continue."

    from app.services.login_limits import LoginLimiter
    from app.web import (
        account,
        admin,
        annotate,
        api,
        auth,
        authoring,
        demo_view,
        generation,
        home,
        jobs,
        judge,
        leaderboard,
        lveval,
        predictions,
        rater,
        results,
        studies,
        tokens,
    )
    from app.web.errors import register_error_handlers
    from app.web.json_bodies import install as read_json_bodies
    from app.web.proxies import trust_proxies
    from app.web.routing import DbIdConverter
    from app.web.security import init_security
    from app.web.sessions import install as install_sessions

    app.extensions["login_limiter"] = LoginLimiter(
        limit=app.config.get("LEVAL_LOGIN_FAILURES_PER_MINUTE", 10), window_seconds=60.0,
        address_limit=app.config.get("LEVAL_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE", 100),
    )
    trust_proxies(app)
    read_json_bodies(app)
    install_sessions(app)
    init_security(app)
    register_error_handlers(app)
    app.url_map.converters["int"] = DbIdConverter  # before any rule: ids past 2^63-1 match no route
    # Every area's URL prefix, here and nowhere else.
    areas = ((home, ""), (auth, ""), (account, "/account"), (annotate, "/annotate"), (admin, "/admin"), (studies, "/studies"),
             (predictions, "/predictions"), (jobs, "/jobs"), (leaderboard, "/leaderboard"), (lveval, "/lveval"),
             (results, "/results"), (judge, "/judge"), (rater, "/judge"), (generation, "/generate"),
             (authoring, "/author"), (tokens, "/account/tokens"), (api, "/api/v1"))
    for area, prefix in areas:
        app.register_blueprint(area.bp, url_prefix=prefix)
    csrf.exempt(api.bp)  # exactly the token API: it never reads a session cookie (app.web.api.auth)
    demo_view.install(app)
    _register_template_helpers(app)
    _keep_compiled_templates(app)


def _keep_compiled_templates(app: Flask) -> None:
    """Keep compiled templates on disk: a results page's first load after a restart compiled five (0.1–0.3 s).

    Jinja keys each file by the template's name and checks its source, so an edited template compiles
    again; a cache that cannot be written is only a miss, never an error page.
    """
    from jinja2 import FileSystemBytecodeCache

    from app.services.folders import template_cache_folder

    class TemplateCache(FileSystemBytecodeCache):
        def load_bytecode(self, bucket) -> None:
            try:
                super().load_bytecode(bucket)
            except OSError:
                pass

        def dump_bytecode(self, bucket) -> None:
            try:
                super().dump_bytecode(bucket)
            except OSError:
                pass

    folder = template_cache_folder(Path(app.instance_path))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    app.jinja_env.bytecode_cache = TemplateCache(str(folder))


NAV_ITEMS = (
    ("annotate.resume", "Annotate", False),
    ("studies.index", "Studies", True),
    ("predictions.index", "Predictions", True),
    ("jobs.index", "Jobs", True),
    ("leaderboard.index", "Leaderboard", True),
    ("lveval.index", "LV-Eval", True),
    ("results.human", "Results", True),
    ("judge.index", "Judge", True),
    ("generation.index", "Generate", True),
)


# Blueprints whose pages sit under another's menu item.
NAV_AREA = {"rater": "judge", "authoring": "generation"}


def _register_template_helpers(app: Flask) -> None:
    from app.web.security import may_read_call_details

    def nav_is_current(endpoint: str) -> bool:
        """Mark the nav item whose area (blueprint) this page belongs to."""
        current = (request.endpoint or "").split(".")[0]
        return NAV_AREA.get(current, current) == endpoint.split(".")[0]

    def call_error(error: str | None) -> str | None:
        """A failed call's stored error as the signed-in user may read it."""
        from app.services.llm.failures import shown_call_error

        return shown_call_error(error, detail=may_read_call_details())

    def job_error(job) -> str | None:
        """A job's stored error as the signed-in user may read it."""
        from app.services.llm.failures import shown_job_error

        return shown_job_error(job.kind, job.error, detail=may_read_call_details())

    app.jinja_env.globals.update(
        app_version=__version__, nav_items=NAV_ITEMS, nav_is_current=nav_is_current, call_error=call_error,
        job_error=job_error, may_read_call_details=may_read_call_details,
    )
