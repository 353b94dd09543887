"""Prediction uploads: upload, preview, confirm; and the metric jobs they start."""
from __future__ import annotations

from flask import (
    Blueprint,
    current_app,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user
from werkzeug.exceptions import RequestEntityTooLarge

from app.core.metrics.files import FileFormatError
from app.extensions import db
from app.models import System
from app.services.jobs import DuplicateJob
from app.services.metrics import queue_unscored, submit_for_systems, submit_metrics_job
from app.services.uploads import (
    AlreadyImported,
    ImportConflict,
    NothingToImport,
    StagingError,
    confirm_upload,
    discard_batch,
    load_batch,
    preview_upload,
)
from app.services.uploads.archive import ACCEPTED_SUFFIXES
from app.services.uploads.long_answers import MAX_HUMAN_ANSWER_CHARS, set_long_answers
from app.services.uploads.overview import metric_jobs, metric_status, systems_page
from app.web.routing import comma_ids
from app.web.security import staff_required

bp = Blueprint("predictions", __name__)


def _max_upload_mb() -> float:
    return (current_app.config.get("MAX_CONTENT_LENGTH") or 0) / (1024 * 1024)


def human_size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB".replace(".0 MB", " MB")
    return f"{max(size, 0) / 1024:.0f} KB"


@bp.get("")
@staff_required
def index():
    highlight = comma_ids(request.args.get("jobs"))
    search, status = request.args.get("q", "")[:200], request.args.get("status", "")
    listing = systems_page(search, status)
    return render_template(
        "predictions/index.html", systems=listing.rows, listing=listing, search=search, status=status,
        jobs=metric_jobs(highlight), highlight=set(highlight),
        max_upload_mb=_max_upload_mb(), max_upload_bytes=current_app.config.get("MAX_CONTENT_LENGTH") or 0,
        max_answer_chars=MAX_HUMAN_ANSWER_CHARS, accepted_suffixes=ACCEPTED_SUFFIXES,
    )


@bp.get("/api/systems")
@staff_required
def api_systems():
    """Each system's metric status; the page asks again when a metric job ends."""
    return jsonify(systems=metric_status())


@bp.post("/upload")
@staff_required
def upload():
    files = [f for f in request.files.getlist("files") if f and f.filename]
    if not files:
        flash("Choose one or more .jsonl files (predictions, or L-Eval task or reference files) or a .zip archive "
              "to upload.", "error")
        return redirect(url_for("predictions.index"))
    uploads = [(f.filename, f.stream) for f in files]  # streams: spooled to disk by the parser, never read whole
    batch = preview_upload(uploads, user_id=current_user.id, system_override=request.form.get("system", ""))
    return redirect(url_for("predictions.preview", batch_id=batch.id))


@bp.get("/uploads/<batch_id>")
@staff_required
def preview(batch_id: str):
    try:
        batch = load_batch(batch_id, current_user.id)
    except StagingError as exc:
        flash(f"Upload not found: {exc}.", "error")
        return redirect(url_for("predictions.index"))
    return render_template("predictions/preview.html", batch=batch)


@bp.post("/uploads/<batch_id>/confirm")
@staff_required
def confirm(batch_id: str):
    try:
        result = confirm_upload(batch_id, user_id=current_user.id, replace=bool(request.form.get("replace")))
    except AlreadyImported as exc:
        flash(f"Nothing more was imported: {exc}.", "info")
        return redirect(url_for("predictions.index"))
    except (StagingError, ImportConflict) as exc:
        flash(f"Nothing was imported: {exc}.", "error")
        return redirect(url_for("predictions.index"))
    except (FileFormatError, NothingToImport) as exc:
        flash(f"Nothing was imported: {exc}", "error")
        return redirect(url_for("predictions.preview", batch_id=batch_id))
    jobs, refused = submit_for_systems(result.systems, user_id=current_user.id)
    flash(f"{result.summary}." + (" Metrics are being computed in the background." if jobs else ""), "success")
    for exc in refused:
        flash(f"Metrics job not started: {exc}.", "info")
    return redirect(url_for("predictions.index", jobs=",".join(str(job.id) for job in jobs) or None))


@bp.post("/uploads/<batch_id>/discard")
@staff_required
def discard(batch_id: str):
    try:
        discard_batch(load_batch(batch_id, current_user.id))
    except StagingError:
        pass
    flash("Upload discarded; nothing was imported.", "info")
    return redirect(url_for("predictions.index"))


@bp.post("/score-unscored")
@staff_required
def score_unscored():
    jobs = queue_unscored(user_id=current_user.id)
    if jobs:
        flash(f"Computing metrics for {len(jobs)} system(s) not scored yet.", "success")
    else:
        flash("Every system's current predictions are scored or being scored.", "info")
    return redirect(url_for("predictions.index", jobs=",".join(str(job.id) for job in jobs) or None))


@bp.post("/systems/<int:system_id>/score")
@staff_required
def score(system_id: int):
    system = db.get_or_404(System, system_id)
    try:
        job = submit_metrics_job(system, user_id=current_user.id)
    except DuplicateJob as exc:
        flash(f"{system.name}: not started, {exc}.", "info")
        return redirect(url_for("predictions.index", jobs=exc.job.id))
    flash(f"Computing metrics for {system.name} (job #{job.id}).", "success")
    return redirect(url_for("predictions.index", jobs=job.id))


@bp.post("/systems/<int:system_id>/long-answers")
@staff_required
def long_answers(system_id: int):
    system = db.get_or_404(System, system_id)
    show = request.form.get("decision") == "show"
    changed = set_long_answers(system, show=show)
    flash(f"{system.name}: {changed} answer(s) over {MAX_HUMAN_ANSWER_CHARS:,} characters "
          f"{'are now shown to annotators' if show else 'are held back from annotators again'}.", "success")
    return redirect(url_for("predictions.index"))


@bp.errorhandler(RequestEntityTooLarge)
def too_large(error):
    size = request.content_length or 0
    limit = current_app.config.get("MAX_CONTENT_LENGTH") or 0
    return render_template("predictions/too_large.html", size=human_size(size) if size else "",
                           limit=human_size(limit)), 413
