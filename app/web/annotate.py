"""Annotator scoring: choosing a study, the question page, autosave and the document panel."""
from __future__ import annotations

from flask import (
    Blueprint,
    abort,
    current_app,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user

from app.core.rubric import RUBRIC
from app.extensions import db
from app.models import Study
from app.services.annotation.choices import only_choice, study_choices
from app.services.annotation.documents import document_payload
from app.services.annotation.pages import load_question_page, next_question
from app.services.annotation.rounds import open_round
from app.services.annotation.payload import ScoreError
from app.services.annotation.scoring import frequencies, save_from_request
from app.services.annotation.workload import load_workload
from app.services.studies.assignment import may_annotate

bp = Blueprint("annotate", __name__)


def _study(study_id: int) -> Study:
    """An open study this account scores in; 404 otherwise (a closed or foreign study is not there for them)."""
    study = db.session.get(Study, study_id)
    if study is None or not may_annotate(study, current_user):
        abort(404)
    return study


@bp.get("/")
def resume():
    """Annotators go to their study (or choose one); staff manage studies."""
    if current_user.is_staff:
        return redirect(url_for("studies.index"))
    choices = study_choices(current_user)
    only = only_choice(choices)
    if only is not None:
        return redirect(url_for("annotate.study_home", study_id=only.id))
    return render_template("annotate/choose.html", choices=choices)


@bp.get("/<int:study_id>/")
def study_home(study_id: int):
    """Resume where the annotator stopped: the question last worked on if it has unscored answers, else the next."""
    study = _study(study_id)
    found = next_question(study, current_user.id)
    if found.question_id is None:
        return redirect(url_for("annotate.done", study_id=study.id, why=found.reason or None))
    return redirect(url_for("annotate.question", study_id=study.id, question_id=found.question_id))


@bp.get("/<int:study_id>/q/<int:question_id>")
def question(study_id: int, question_id: int):
    page = load_question_page(_study(study_id), current_user.id, question_id)
    if page is None:
        abort(404)
    previous, following = page.workload.neighbours(question_id)
    return render_template(
        "annotate/question.html", page=page, previous=previous, following=following, rubric=RUBRIC,
        position=page.workload.position(question_id), document_place=page.workload.document_place(question_id),
        document_index=page.workload.document_index(question_id),
        document_url=url_for("annotate.document", document_id=page.document_id, v=page.document_version),
    )


@bp.get("/<int:study_id>/done")
def done(study_id: int):
    """The finish page: own score frequencies once everything is scored, else what is left."""
    study = _study(study_id)
    round_ = open_round(study.id, current_user.id)
    workload = load_workload(study, round_.id, current_user.id)
    counts = frequencies(study.id, round_.id)
    return render_template(
        "annotate/done.html", study=study, round=round_, workload=workload, counts=counts, rubric=RUBRIC,
        most=max(counts.values()) or 1, first_open=workload.first_open(),
        why=WHY_NOTHING.get(request.args.get("why", "")) if study.adaptive else None,
    )


# Why an adaptive study gave nothing more (services/studies/allocation.py's reasons).
WHY_NOTHING = {
    "settled": "The study's ranking is settled: nothing more is needed. Thank you.",
    "budget": "The study's budget is spent: nothing more is needed. Thank you.",
    "exhausted": "There is nothing more for you to score in this study.",
    "ahead": "Not everyone has started yet: come back once the other annotators have read the first document "
             "(or the study's start window has passed).",
    "not_needed": "The documents left go to other annotators: there is nothing more for you in this study now. "
                  "Thank you.",
}

DOCUMENT_MAX_AGE = 24 * 3600


def _error(message: str, status: int, **extra):
    return jsonify(error=message, **extra), status


@bp.post("/api/score")
def save_score_api():
    """Save one score {question_id, label, value, comment?, round?}; repeating a save is harmless."""
    try:
        return jsonify(save_from_request(current_user.id, request.get_json(silent=True)))
    except ScoreError as exc:
        return jsonify(exc.as_json()), exc.status


@bp.get("/document/<int:document_id>")
def document(document_id: int):
    """The document text as JSON segments, fetched by the page's script (cached by version); only for a
    document of a question this account may score now."""
    payload = document_payload(document_id, current_user.id)
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
