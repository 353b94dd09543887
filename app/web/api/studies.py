"""API: studies (list, create, open, close, progress, export) and their results.

Paths address a study by its id (`/studies/{id}`: only ASCII digits match); a script that knows a name asks
`GET /studies?name=…`, so a study named "1" is never taken for the one whose id is 1.
"""
from __future__ import annotations

from flask import abort, request

from app.extensions import db
from app.models import Study
from app.services.accounts import AccountError, ids_of_usernames
from app.services.annotation.oversight import annotator_progress
from app.services.exports import csv_text, jsonl_text, results_text, score_rows
from app.services.results import full_results
from app.services.studies import setup
from app.services.studies.lookup import find_study, study_rows
from app.web.api.auth import access, caller
from app.web.api.blueprint import bp
from app.web.api.paging import page_of
from app.web.api.schemas import (
    AnnotatorProgressOut,
    ErrorBody,
    ExportQuery,
    FieldError,
    Open,
    Page,
    PageQuery,
    StudiesQuery,
    StudyCreate,
    StudyDetail,
    StudyOut,
)
from app.web.api.spec import responses, spec
from app.web.downloads import attachment

ID_PATH = {"study_id": "The study's id (`GET /api/v1/studies?name=…` finds a study by its name)"}


def _study(study_id: int) -> Study:
    return find_study(study_id=study_id) or abort(404, description=f"no study with id {study_id}")


def _out(row) -> StudyOut:
    study = row.study
    return StudyOut(id=study.id, name=study.name, status=study.status, description=study.description or "",
                    questions=row.questions, systems=row.systems, answers=row.answers,
                    annotators="everyone" if study.everyone_may_score else row.annotators, overlap=study.overlap,
                    scores=row.scores)


def _detail(study: Study) -> StudyDetail:
    progress = [AnnotatorProgressOut(username=p.username, round=p.round_number, done=p.done, total=p.total)
                for p in annotator_progress(study)]
    row = next(r for r in study_rows() if r.study.id == study.id)
    return StudyDetail(**_out(row).model_dump(), progress=progress)


@bp.get("/studies")
@access(write=False)
@spec.validate(query=StudiesQuery, resp=responses(HTTP_200=Page[StudyOut]), tags=["studies"])
def studies():
    """Every study with its sizes, or (`?name=`) the one with that name (case-insensitive), if any."""
    query: StudiesQuery = request.context.query
    rows = study_rows()
    if query.name is not None:
        named = find_study(name=query.name)
        rows = [row for row in rows if named is not None and row.study.id == named.id]
    return page_of([_out(row) for row in rows], query)


@bp.post("/studies")
@access(write=True)
@spec.validate(json=StudyCreate, resp=responses(HTTP_201=StudyDetail, HTTP_409=ErrorBody, HTTP_422=ErrorBody),
               tags=["studies"])
def create_study():
    """Create a study as a draft, as the New study form does."""
    body: StudyCreate = request.context.json
    try:
        annotators = None if body.annotators is None else ids_of_usernames(body.annotators)
        if annotators == []:
            raise setup.StudyError("annotators names nobody: give at least one username, or null for every account")
        spec_ = setup.StudySpec(name=body.name, description=body.description,
                                question_ids=setup.questions_for(body.questions), reference_kinds=body.references,
                                reference_policy=body.policy, annotator_ids=annotators, overlap=body.overlap)
        study = setup.create_study(spec_, by_user_id=caller().id)
    except (setup.StudyError, AccountError) as exc:
        db.session.rollback()
        status = 409 if find_study(name=body.name) is not None else 422
        field = getattr(exc, "field", None)
        errors = [FieldError(field=field, message=str(exc))] if field else None
        return ErrorBody(error=str(exc), status=status, errors=errors), status
    return _detail(study), 201


@bp.get("/studies/<int:study_id>")
@access(write=False)
@spec.validate(resp=responses(HTTP_200=StudyDetail, HTTP_404=ErrorBody), tags=["studies"],
               path_parameter_descriptions=ID_PATH)
def study(study_id: int):
    """A study's sizes and each annotator's progress."""
    return _detail(_study(study_id))


def _set_status(study_id: int, status: str):
    study = _study(study_id)
    try:
        setup.set_status(study, status)
        db.session.commit()
    except setup.StudyError as exc:
        db.session.rollback()
        return ErrorBody(error=str(exc), status=409), 409
    return _detail(study)


@bp.post("/studies/<int:study_id>/open")
@access(write=True)
@spec.validate(resp=responses(HTTP_200=StudyDetail, HTTP_404=ErrorBody, HTTP_409=ErrorBody), tags=["studies"],
               path_parameter_descriptions=ID_PATH)
def open_study(study_id: int):
    """Open the study to its annotators (a draft or a closed study)."""
    return _set_status(study_id, "open")


@bp.post("/studies/<int:study_id>/close")
@access(write=True)
@spec.validate(resp=responses(HTTP_200=StudyDetail, HTTP_404=ErrorBody, HTTP_409=ErrorBody), tags=["studies"],
               path_parameter_descriptions=ID_PATH)
def close_study(study_id: int):
    """Close the study: annotators no longer see it."""
    return _set_status(study_id, "closed")


@bp.get("/studies/<int:study_id>/export")
@access(write=False)
@spec.validate(query=ExportQuery, resp=responses(HTTP_200=None, HTTP_404=ErrorBody), tags=["studies"],
               path_parameter_descriptions=ID_PATH)
def export(study_id: int):
    """The study's scores as JSON lines or CSV, or its results JSON (the Results page's exports)."""
    study = _study(study_id)
    query: ExportQuery = request.context.query
    if query.format == "results":
        return attachment(results_text(full_results(study.id)), f"{study.name}-results.json", "json")
    rows = score_rows(study.id, query.rounds)
    text = jsonl_text(rows) if query.format == "jsonl" else csv_text(rows)
    return attachment(text, f"{study.name}-scores-{query.rounds}.{query.format}", query.format)


@bp.get("/results/<int:study_id>")
@access(write=False)
@spec.validate(resp=responses(HTTP_200=Open, HTTP_404=ErrorBody), tags=["results"],
               path_parameter_descriptions=ID_PATH)
def results(study_id: int):
    """Human scores, metrics against humans (τ) and agreement (α): the `results` export, as JSON."""
    return Open(**full_results(_study(study_id).id))


@bp.get("/results/<int:study_id>/scores")
@access(write=False)
@spec.validate(query=PageQuery, resp=responses(HTTP_200=Page[Open], HTTP_404=ErrorBody), tags=["results"],
               path_parameter_descriptions=ID_PATH)
def scores(study_id: int):
    """The study's human scores, one row per score (every round), as the scores export has them."""
    return page_of([Open(**row) for row in score_rows(_study(study_id).id, "all")], request.context.query)
