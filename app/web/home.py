"""Home page and health check."""
from __future__ import annotations

from flask import Blueprint, current_app, jsonify, redirect, render_template, url_for
from flask_login import current_user
from sqlalchemy.exc import DBAPIError

from app.services import summary
from app.services.health import check_storage
from app.web.errors import RETRY_AFTER_SECONDS

bp = Blueprint("home", __name__)


@bp.get("/healthz")
def healthz():
    """Report whether the storage can be read and written and is intact (503 if not); needs no sign-in.

    Anyone who reaches the port may ask, so a degraded answer says only the kind of failure; what failed
    (a folder's absolute path, a file named with the server's PID, the driver's words) goes to the server's
    log, and to a signed-in admin.
    """
    health = check_storage()
    if health.ok:
        return jsonify(status="ok", db="ok")
    current_app.logger.warning("/healthz: storage degraded (%s): %s", health.kind, health.problem)
    body = {"status": "degraded", "db": "error", "kind": health.kind, "retryable": True}
    if _signed_in_admin():
        body["detail"] = health.problem
    response = jsonify(body)
    response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response.headers["Cache-Control"] = "no-store"
    return response, 503


def _signed_in_admin() -> bool:
    """Whether the session is an admin's; False when the account cannot be read (the storage may be what failed)."""
    try:
        return current_user.is_authenticated and current_user.role == "admin"
    except (DBAPIError, OSError):
        return False


@bp.get("/")
def index():
    """Send annotators to their work and staff to the overview."""
    if current_user.role == "annotator":
        return redirect(url_for("annotate.resume"))
    return render_template("home/index.html", counts=summary.counts(), steps=summary.next_steps(current_user.id))
