"""Authoring pages: write new instruction/answer pairs with evidence on a long document."""
from __future__ import annotations

from flask import (
    Blueprint,
    abort,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user

from app.extensions import db
from app.models import AuthoredPair, Document
from app.models.generation import AUTHORED
from app.models.ids import parse_db_id
from app.services import authoring
from app.web.downloads import attachment
from app.web.security import staff_required

bp = Blueprint("authoring", __name__)


MAX_IMPORT_BYTES = 100 * 1024 * 1024


def _document_or_404(document_id: int) -> Document:
    document = db.session.get(Document, document_id)
    if document is None or document.collection == AUTHORED:
        abort(404)
    return document


def _pair_or_404(pair_id: int) -> AuthoredPair:
    pair = db.session.get(AuthoredPair, pair_id)
    if pair is None:
        abort(404)
    return pair


def _version(data: dict) -> int | None:
    value = data.get("version", request.args.get("version"))
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    return parse_db_id(value) if isinstance(value, str) else None  # a version counter is an Integer column


@bp.get("/")
@staff_required
def index():
    return render_template("authoring/index.html", documents=authoring.documents())


@bp.post("/import")
@staff_required
def import_file():
    upload = request.files.get("file")
    if upload is None or not upload.filename:
        flash("Choose a task file (.jsonl) to import.", "error")
        return redirect(url_for("authoring.index"))
    raw = upload.stream.read(MAX_IMPORT_BYTES + 1)
    if len(raw) > MAX_IMPORT_BYTES:
        flash(f"{upload.filename}: larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MB; nothing was imported.", "error")
        return redirect(url_for("authoring.index"))
    try:
        report = authoring.import_file(raw, upload.filename, current_user)
    except authoring.PairError as exc:
        flash(f"{exc}. Nothing was imported.", "error")
    else:
        flash(f"{upload.filename}: {report.documents} documents ({report.created_documents} new), "
              f"{report.pairs_created} pairs added, {report.pairs_unchanged} already there.", "info")
    return redirect(url_for("authoring.index"))


@bp.get("/documents/<int:document_id>")
@staff_required
def document(document_id: int):
    doc = _document_or_404(document_id)
    return render_template("authoring/document.html", document=doc,
                           pane_url=url_for("authoring.pane", document_id=doc.id),
                           pairs=[authoring.pair_json(p, doc.text) for p in authoring.live_pairs(doc.id)])


@bp.get("/documents/<int:document_id>/pane.json")
@staff_required
def pane(document_id: int):
    return jsonify(authoring.pane_payload(_document_or_404(document_id)))


@bp.get("/documents/<int:document_id>/pairs.json")
@staff_required
def pairs(document_id: int):
    doc = _document_or_404(document_id)
    return jsonify(pairs=[authoring.pair_json(p, doc.text) for p in authoring.live_pairs(doc.id)])


@bp.post("/documents/<int:document_id>/pairs")
@staff_required
def create(document_id: int):
    doc = _document_or_404(document_id)
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return jsonify(error="send a JSON object with instruction, answer and evidence"), 400
    try:
        pair = authoring.create_pair(doc, data.get("instruction"), data.get("answer"), data.get("evidence"), current_user)
    except authoring.PairError as exc:
        return jsonify(error=str(exc)), 400
    return jsonify(pair=authoring.pair_json(pair, doc.text)), 201


@bp.post("/pairs/<int:pair_id>")
@staff_required
def update(pair_id: int):
    pair = _pair_or_404(pair_id)
    data = request.get_json(silent=True)
    if not isinstance(data, dict) or _version(data) is None:
        return jsonify(error="send a JSON object with version, instruction, answer and evidence"), 400
    doc = db.session.get(Document, pair.document_id)
    try:
        pair = authoring.update_pair(pair, _version(data), data.get("instruction"), data.get("answer"),
                                     data.get("evidence"), current_user)
    except authoring.PairError as exc:
        return jsonify(error=str(exc)), 400
    except authoring.StaleEdit as exc:
        current = exc.pair
        return jsonify(error=str(exc), pair=None if current.deleted_at else authoring.pair_json(current, doc.text)), 409
    return jsonify(pair=authoring.pair_json(pair, doc.text))


@bp.post("/pairs/<int:pair_id>/delete")
@staff_required
def delete(pair_id: int):
    pair = _pair_or_404(pair_id)
    version = _version(request.get_json(silent=True) or {})
    if version is None:
        return jsonify(error="say which version you are deleting"), 400
    doc = db.session.get(Document, pair.document_id)
    try:
        authoring.delete_pair(pair, version, current_user)
    except authoring.StaleEdit as exc:
        current = exc.pair
        return jsonify(error=str(exc), pair=None if current.deleted_at else authoring.pair_json(current, doc.text)), 409
    return jsonify(deleted=pair_id)


@bp.get("/documents/<int:document_id>/export")
@staff_required
def export(document_id: int):
    name, text = authoring.export_document(_document_or_404(document_id))
    return attachment(text, name, "jsonl")
