"""JSON endpoints of the question page: autosave and the long document."""
from __future__ import annotations

from flask import current_app, jsonify, request
from flask_login import current_user

from app.services.annotation.documents import document_payload
from app.services.annotation.scoring import ScoreError, save_from_request
from app.annotate.blueprint import bp

DOCUMENT_MAX_AGE = 24 * 3600


def _error(message: str, status: int, **extra):
    return jsonify(error=message, **extra), status


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
        return jsonify(save_from_request(current_user.id, _json_body()))
    except ScoreError as exc:
        return jsonify(exc.as_json()), exc.status


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
