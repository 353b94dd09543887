"""JSON endpoints of the question page: autosave and the long document."""
from __future__ import annotations

from flask import current_app, jsonify, request
from flask_login import current_user
from flask_wtf.csrf import CSRFError

from ..services.annotation.blinding import label_index, resolve_in_order
from ..services.annotation.documents import document_payload
from ..services.annotation.rounds import find_open_round
from ..services.annotation.scoring import ScoreError, as_utc, load_save_context, parse_score_payload, save_score
from ..services.annotation.workload import progress_after_save
from . import bp

DOCUMENT_MAX_AGE = 24 * 3600
STARTED_OVER = "Your scoring round has changed (you were started over). Reload the page."


def _error(message: str, status: int, **extra):
    return jsonify(error=message, **extra), status


@bp.errorhandler(CSRFError)
def csrf_failed(exc: CSRFError):
    if request.path.startswith("/annotate/api/"):
        return _error("The page's security token is missing or stale. Reload the page.", 400, reload=True)
    return exc


def _json_body() -> object:
    """The request's JSON, or None when it is not JSON (silent=True does not cover nesting past the recursion limit)."""
    try:
        return request.get_json(silent=True)
    except RecursionError:
        return None


@bp.post("/api/score")
def save_score_api():
    """Save one score {question_id, label, value, comment?, round?}; repeating a save is harmless."""
    try:
        payload = parse_score_payload(_json_body())
    except ScoreError as exc:
        return _error(exc.message, exc.status, field=exc.field)
    if label_index(payload.label) is None:
        return _error("label must name an answer, such as \"A\".", 400, field="label")
    context = load_save_context(current_user.id, payload.question_id)
    if context is None:
        current = find_open_round(current_user.id)
        if current is None or payload.round_number not in (None, current.number):
            return _error(STARTED_OVER, 409, reload=True)
        return _error("This question is not open in your current round. Reload the page.", 409, reload=True)
    if payload.round_number is not None and payload.round_number != context.round_number:
        return _error(STARTED_OVER, 409, reload=True)
    prediction_id = resolve_in_order(context.order, payload.label)
    if prediction_id is None:
        return _error(f"Answer {payload.label} is not part of this question any more. Reload the page.", 409,
                      reload=True)
    result = save_score(context, prediction_id, payload.label, payload.value, payload.comment)
    progress = progress_after_save(context.round_id, payload.question_id)
    return jsonify(
        saved=True, changed=result.changed, label=payload.label, value=result.value, comment=result.comment,
        saved_at=as_utc(result.saved_at).isoformat(timespec="seconds"),
        progress={"done": progress.done, "total": progress.total},
        question={"scored": progress.question_scored, "total": progress.question_total},
    )


@bp.get("/document/<int:document_id>")
def document(document_id: int):
    """The document text as JSON segments, fetched by the page's script (cached by version)."""
    payload = document_payload(document_id)
    if payload is None:
        return _error("No such document.", 404)
    response = current_app.response_class(payload.body, mimetype="application/json")
    response.set_etag(payload.etag)
    response.cache_control.private = True
    if request.args.get("v") == payload.etag:
        response.cache_control.max_age = DOCUMENT_MAX_AGE  # the URL names this exact text
    else:
        response.cache_control.no_cache = True
    return response.make_conditional(request)
