"""Which data a page shows: the real data, or the demo when a user asks for it (services.demo owns the rule).

Every ORM query made while serving a request is scoped once real data exists, so no list, leaderboard,
dropdown, chart or export puts a demo system, document or study beside real ones. The choice is kept
in the signed session; staff are told once that the demo is still there and how to remove it.
"""
from __future__ import annotations

from flask import (
    Blueprint,
    Flask,
    flash,
    g,
    has_request_context,
    redirect,
    request,
    session,
    url_for,
)
from flask_login import current_user
from sqlalchemy import event
from sqlalchemy.orm import ORMExecuteState, Session

from app.extensions import db
from app.services import demo_scope as demo
from app.services import stored_settings
from app.web.security import API_BLUEPRINT, staff_required

bp = Blueprint("demo_view", __name__)
SESSION_KEY = "demo_view"
NOTICE_PREFIX = "demo.notice_shown."  # one row per user told


def install(app: Flask) -> None:
    app.register_blueprint(bp)
    app.before_request(_choose_scope)
    app.context_processor(lambda: {"demo_view": _template_state()})
    if not event.contains(Session, "do_orm_execute", _scope_statement):  # one listener, whatever the apps
        event.listen(Session, "do_orm_execute", _scope_statement)


def _choose_scope() -> None:
    """None: no scoping (only the demo, or nothing, exists); True: the demo view; False: the real data."""
    g.demo_scope = None
    if request.endpoint in (None, "static", "home.healthz"):
        return
    present = demo.data_present()
    if not (present.real and present.demo):  # one side alone: nothing to keep apart, no demo to show
        return
    api = request.blueprint == API_BLUEPRINT  # no session there: the real data, and no notice to flash
    g.demo_scope = not api and bool(session.get(SESSION_KEY))
    if not api and not g.demo_scope and request.method == "GET" and current_user.is_authenticated \
            and current_user.is_staff:
        _tell_once()


def _scope_statement(state: ORMExecuteState) -> None:
    if not has_request_context() or demo.is_lifted(state.execution_options, state.session.info):
        return
    scope = g.get("demo_scope")
    if scope is not None and (state.is_select or state.is_relationship_load):
        state.statement = state.statement.options(*demo.scope_options(scope))


def _tell_once() -> None:
    user = str(current_user.id)
    if stored_settings.read(NOTICE_PREFIX, (user,)):
        return
    stored_settings.stage(NOTICE_PREFIX, {user: "1"})
    db.session.commit()
    flash("The fictional demo data set is still here, kept apart from your data: open it with “Show the demo” "
          "at the top of any page, or remove it under Studies → Delete the demo data set "
          "(or `python run.py delete-demo`).", "info")


def _template_state() -> dict:
    scope = g.get("demo_scope")
    return {"separated": scope is not None, "showing_demo": scope is True}


@bp.post("/demo-view")
@staff_required
def toggle():
    session[SESSION_KEY] = request.form.get("show") == "1"
    target = request.form.get("next") or url_for("home.index")
    return redirect(target if target.startswith("/") and not target.startswith("//") else url_for("home.index"))
