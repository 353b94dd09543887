"""API: studies (list, create, open, close, delete, choose systems, progress, export).

Paths address a study by its id (`/studies/{id}`: only ASCII digits match); a script that knows a name asks
`GET /studies?name=…`, so a study named "1" is never taken for the one whose id is 1.
"""
from __future__ import annotations

from flask import abort, request, url_for
from sqlalchemy import select

from app.extensions import db
from app.models import Study, StudySystem
from app.services import deletion
from app.services.accounts import AccountError, ids_of_usernames
from app.services.annotation.oversight import annotator_progress
from app.services.exports import results_text, stored_export
from app.services.results import full_results
from app.services.studies import setup
from app.services.studies.lookup import find_study, study_rows
from app.web.api.auth import access, caller
from app.web.api.blueprint import bp
from app.web.api.deleting import delete_answer
from app.web.api.paging import page_of
from app.web.api.schemas import (
    AdaptiveSettings,
    AnnotatorProgressOut,
    Deleted,
    DeleteQuery,
    ExportQuery,
    Problem,
    StudiesQuery,
    StudyCreate,
    StudyDetail,
    StudyOut,
    StudyPage,
    StudySystems,
)
from app.web.api.schemas.common import utc
from app.web.api.spec import operation
from app.web.downloads import attachment
from app.web.errors import Problem as Refusal

ID_PATH = {"study_id": "The study's id (`GET /api/v1/studies?name=…` finds a study by its name)"}
ADAPTIVE_FIELDS = tuple(AdaptiveSettings.model_fields)


def study_of(study_id: int) -> Study:
    return find_study(study_id=study_id) or abort(404, description=f"no study with id {study_id}")


def _out(row) -> StudyOut:
    study = row.study
    return StudyOut(id=study.id, name=study.name, status=study.status, description=study.description or "",
                    questions=row.questions, systems=row.systems, answers=row.answers,
                    annotators="everyone" if study.everyone_may_score else row.annotators,
                    everyone_may_score=bool(study.everyone_may_score), overlap=study.overlap, scores=row.scores,
                    allocation=study.allocation or "fixed", created_at=utc(study.created_at))


def _detail(study: Study) -> StudyDetail:
    progress = [AnnotatorProgressOut(username=p.username, round=p.round_number, done=p.done, total=p.total)
                for p in annotator_progress(study)]
    row = next(r for r in study_rows() if r.study.id == study.id)
    systems = list(db.session.scalars(select(StudySystem.system_id).where(StudySystem.study_id == study.id)
                                      .order_by(StudySystem.system_id)))
    adaptive = (AdaptiveSettings(**{name: getattr(study, name) for name in ADAPTIVE_FIELDS})
                if study.allocation == "adaptive" else None)
    return StudyDetail(**_out(row).model_dump(), system_ids=systems, references=list(study.reference_kinds or []),
                       policy=study.reference_policy, merge_identical=bool(study.merge_identical),
                       adaptive=adaptive, progress=progress)


def _refused(exc: Exception, *, field: str | None = None, status: int = 422):
    db.session.rollback()
    field = field or getattr(exc, "field", None)
    return Refusal(status, str(exc), errors=[{"field": field, "location": "body" if field else None,
                                              "message": str(exc)}])


@bp.get("/studies")
@access(write=False)
@operation("listStudies", query=StudiesQuery, tags=["studies"], resp={"HTTP_200": StudyPage})
def studies():
    """List the studies with their sizes.

    `name` finds the study of that name (case-insensitive; how a script finds a study's id); `status` filters.
    """
    query: StudiesQuery = request.context.query
    rows = study_rows()
    if query.name is not None:
        named = find_study(name=query.name)
        rows = [row for row in rows if named is not None and row.study.id == named.id]
    if query.status is not None:
        rows = [row for row in rows if row.study.status == query.status]
    return page_of([_out(row) for row in rows], query)


@bp.post("/studies")
@access(write=True)
@operation("createStudy", json=StudyCreate, tags=["studies"], creates=True,
           resp={"HTTP_201": StudyDetail, "HTTP_409": Problem, "HTTP_422": Problem})
def create_study():
    """Create a study as a draft, as the New study form does.

    Its questions (a question set), systems (ids; default every system that answers), references, who scores
    (usernames or "everyone") and how answers are shared out: fixed (`overlap` annotators per document) or
    adaptive (a budget and its options). A name already taken is a 409; anything else wrong a 422 naming the
    field.
    """
    body: StudyCreate = request.context.json
    try:
        annotators = None if body.annotators in (None, "everyone") else ids_of_usernames(body.annotators)
        questions = setup.questions_for(body.questions)
        spec_ = setup.StudySpec(
            name=body.name, description=body.description, question_ids=questions,
            system_ids=None if body.systems is None else setup.chosen_systems(body.systems, questions, strict=True),
            reference_kinds=list(body.references), reference_policy=body.policy, annotator_ids=annotators,
            overlap=body.overlap, allocation=body.allocation, merge_identical=body.merge_identical,
            **{name: getattr(body, name) for name in ADAPTIVE_FIELDS})
        study = setup.create_study(spec_, by_user_id=caller().id)
    except AccountError as exc:
        raise _refused(exc, field="annotators") from None
    except setup.StudyError as exc:
        taken = exc.field == "name" and find_study(name=body.name) is not None
        raise _refused(exc, status=409 if taken else 422) from None
    return _detail(study), 201, {"Location": url_for("api.study", study_id=study.id)}


@bp.get("/studies/<int:study_id>")
@access(write=False)
@operation("getStudy", tags=["studies"], resp={"HTTP_200": StudyDetail, "HTTP_404": Problem}, path=ID_PATH)
def study(study_id: int):
    """A study's sizes, systems and settings, and each annotator's progress.

    Progress is each annotator's current round: answers done of answers given.
    """
    return _detail(study_of(study_id))


def _set_status(study_id: int, status: str):
    study = study_of(study_id)
    try:
        setup.set_status(study, status)
        db.session.commit()
    except setup.StudyError as exc:
        raise _refused(exc, field="study_id", status=409) from None
    return _detail(study)


@bp.post("/studies/<int:study_id>/open")
@access(write=True)
@operation("openStudy", tags=["studies"], resp={"HTTP_200": StudyDetail, "HTTP_404": Problem, "HTTP_409": Problem},
           path=ID_PATH)
def open_study(study_id: int):
    """Open the study to its annotators (a draft or a closed study).

    An open study stays open (200).
    """
    return _set_status(study_id, "open")


@bp.post("/studies/<int:study_id>/close")
@access(write=True)
@operation("closeStudy", tags=["studies"], resp={"HTTP_200": StudyDetail, "HTTP_404": Problem,
                                                 "HTTP_409": Problem}, path=ID_PATH)
def close_study(study_id: int):
    """Close the study: annotators no longer see it.

    A draft cannot be closed (409); a closed study may be opened again.
    """
    return _set_status(study_id, "closed")


@bp.put("/studies/<int:study_id>/systems")
@access(write=True)
@operation("setStudySystems", json=StudySystems, tags=["studies"],
           resp={"HTTP_200": StudyDetail, "HTTP_404": Problem, "HTTP_422": Problem}, path=ID_PATH)
def set_systems(study_id: int):
    """Make exactly these systems the study's, as the study page's Systems box does.

    New systems' current answers are pinned; scores of systems left out are kept, not counted.
    """
    study = study_of(study_id)
    try:
        setup.set_systems(study, request.context.json.systems)
        db.session.commit()
    except setup.StudyError as exc:
        raise _refused(exc) from None
    return _detail(study)


@bp.delete("/studies/<int:study_id>")
@access(write=True)
@operation("deleteStudy", query=DeleteQuery, tags=["studies"],
           resp={"HTTP_200": Deleted, "HTTP_404": Problem, "HTTP_409": Problem}, path=ID_PATH)
def delete_study(study_id: int):
    """Delete a study, as Studies → delete does.

    Its human scores go only with force=true, and are first saved to a file on the server; without it, a 409
    says how many would go.
    """
    study = study_of(study_id)
    return delete_answer(deletion.plan_study(study), lambda force: deletion.delete_study(study, force=force))


@bp.get("/studies/<int:study_id>/export")
@access(write=False)
@operation("exportStudy", query=ExportQuery, tags=["studies"], resp={"HTTP_200": None, "HTTP_404": Problem},
           path=ID_PATH)
def export(study_id: int):
    """The study's scores as JSON lines or CSV, or its results JSON (the Results page's exports).

    A file to save (named for the study); `rounds` all or each annotator's current round.
    """
    study = study_of(study_id)
    query: ExportQuery = request.context.query
    if query.format == "results":
        return attachment(results_text(full_results(study.id)), f"{study.name}-results.json", "json")
    return attachment(stored_export(query.format, study.id, rounds=query.rounds),
                      f"{study.name}-scores-{query.rounds}.{query.format}", query.format)
