"""API: upload predictions, follow their metric jobs, list systems, read the Leaderboard."""
from __future__ import annotations

from flask import abort, request

from app.extensions import db
from app.models import Job
from app.services.jobs import job_as_dict
from app.services.llm.failures import job_for_viewer
from app.services.metrics.leaderboard_json import leaderboard_json
from app.services.uploads import ImportConflict, StagingError
from app.services.uploads.direct import UploadRefused, upload_all_or_nothing
from app.services.uploads.overview import systems_overview
from app.web.api.auth import access, caller
from app.web.api.blueprint import bp
from app.web.api.paging import page_of
from app.web.api.schemas import (
    ErrorBody,
    JobOut,
    LeaderboardOut,
    LeaderboardQuery,
    Page,
    PageQuery,
    SystemOut,
    UploadForm,
    UploadOut,
)
from app.web.api.spec import responses, spec
from app.web.security import may_read_call_details


@bp.post("/predictions")
@access(write=True)
@spec.validate(form=UploadForm, resp=responses(HTTP_201=UploadOut, HTTP_409=ErrorBody, HTTP_413=ErrorBody,
                                               HTTP_422=ErrorBody), tags=["predictions"])
def upload_predictions():
    """Upload predictions: all files or none, then their metrics are queued."""
    form: UploadForm = request.context.form
    try:
        done = upload_all_or_nothing([(form.file.filename, form.file.stream)], user_id=caller().id,
                                     system_override=form.system)
    except UploadRefused as exc:
        return ErrorBody(error=str(exc), status=422, errors=exc.errors), 422
    except (ImportConflict, StagingError) as exc:
        return ErrorBody(error=f"nothing was imported: {exc}", status=409), 409
    result = done.result
    return UploadOut(upload=done.batch_id, files=result.files, predictions=result.predictions,
                     systems=[{"id": s.id, "name": s.name} for s in result.systems], jobs=done.job_ids), 201


@bp.get("/jobs/<int:job_id>")
@access(write=False)
@spec.validate(resp=responses(HTTP_200=JobOut, HTTP_404=ErrorBody), tags=["jobs"])
def job(job_id: int):
    """A job's kind, state, progress and error."""
    found = db.session.get(Job, job_id) or abort(404)
    data = job_for_viewer(job_as_dict(found), detail=may_read_call_details())
    return JobOut(id=data["id"], kind=data["kind"], state=data["status"], done=data["done"], total=data["total"],
                  progress=data["fraction"], message=data["message"], error=data["error"],
                  created_at=data["created_at"], started_at=data["started_at"], finished_at=data["finished_at"],
                  result=data["result"])


@bp.get("/systems")
@access(write=False)
@spec.validate(query=PageQuery, resp=responses(HTTP_200=Page[SystemOut]), tags=["systems"])
def systems():
    """Every system with its prediction count and whether it is scored."""
    rows = [SystemOut(id=o.system.id, name=o.system.name, predictions=o.predictions, scored=o.scored,
                      files=len(o.files)) for o in systems_overview()]
    return page_of(rows, request.context.query)


@bp.get("/leaderboard")
@access(write=False)
@spec.validate(query=LeaderboardQuery, resp=responses(HTTP_200=LeaderboardOut), tags=["leaderboard"])
def leaderboard():
    """Per system, every metric the Leaderboard shows, with its profile and row counts; `benchmark` gives one
    benchmark's table alone (`leval`, `lveval`, `longbench`)."""
    query = request.context.query
    return LeaderboardOut(**leaderboard_json(query.profile, query.benchmark))

