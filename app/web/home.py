"""Home page and health check."""
from __future__ import annotations

from flask import Blueprint, jsonify, redirect, render_template, url_for
from flask_login import current_user

from app.services import summary
from app.services.health import check_storage
from app.web.errors import RETRY_AFTER_SECONDS

bp = Blueprint("home", __name__)


@bp.get("/healthz")
def healthz():
    """Report whether the storage can be read and written and is intact (503 if not); needs no sign-in."""
    health = check_storage()
    if health.ok:
        return jsonify(status="ok", db="ok")
    response = jsonify(status="degraded", db=f"error: {health.kind}: {health.problem}", retryable=True)
    response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response, 503


@bp.get("/")
def index():
    """Send annotators to their work and staff to the overview."""
    if current_user.role == "annotator":
        return redirect(url_for("annotate.resume"))
    return render_template("home/index.html", counts=summary.counts(), steps=summary.next_steps())
