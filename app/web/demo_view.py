"""Which data a page shows: the real data, or the demo when a user asks for it (services.demo owns the rule).

Every read made while serving a request is scoped once real data exists (services.demo_scope), so no
list, leaderboard, dropdown, chart, count or export puts a demo system, document or study, or anything
made of them, beside real ones. The choice is kept in the signed session; staff are told once that
the demo is still there and how to remove it.
"""
from __future__ import annotations

from flask import (
    Blueprint,
    Flask,
    flash,
    redirect,
    request,
    session,
    url_for,
)
from flask_login import current_user

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


def _choose_scope() -> None:
    """The view of this request's reads: the demo when a staff member asked for it, else the real data
    (the API has no session: always the real data). Nothing is kept apart while one side exists alone."""
    if request.endpoint in (None, "static", "home.healthz"):
        return
    api = request.blueprint == API_BLUEPRINT  # no session there: the real data, and no notice to flash
    demo.enter(demo.DEMO_VIEW if not api and session.get(SESSION_KEY) else demo.AUTO)
    if not api and request.method == "GET" and current_user.is_authenticated and current_user.is_staff \
            and demo.current() is False:
        _tell_once()


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
    scope = demo.current()
    return {"separated": scope is not None, "showing_demo": scope is True}


@bp.post("/demo-view")
@staff_required
def toggle():
    session[SESSION_KEY] = request.form.get("show") == "1"
    target = request.form.get("next") or url_for("home.index")
    return redirect(target if target.startswith("/") and not target.startswith("//") else url_for("home.index"))
