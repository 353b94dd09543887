"""API: upload predictions (all files or none, their metrics queued), read an upload, delete a prediction file."""
from __future__ import annotations

from flask import abort, request, url_for

from app.extensions import db
from app.models import PredictionFile
from app.services import deletion
from app.services.uploads import ImportConflict, StagingError, confirmed_batch
from app.services.uploads.direct import UploadRefused, upload_all_or_nothing
from app.web.api.auth import access, caller
from app.web.api.blueprint import bp
from app.web.api.deleting import delete_answer
from app.web.api.schemas import (
    Deleted,
    DeleteQuery,
    FileImported,
    Problem,
    SystemRef,
    UploadForm,
    UploadOut,
    UploadRecord,
)
from app.web.api.schemas.common import utc
from app.web.api.spec import operation
from app.web.errors import Problem as Refusal


@bp.post("/predictions")
@access(write=True)
@operation("uploadPredictions", form=UploadForm, tags=["predictions"], creates=True,
           resp={"HTTP_201": UploadOut, "HTTP_409": Problem, "HTTP_413": Problem, "HTTP_422": Problem})
def upload_predictions():
    """Upload predictions: every file or none, then their metrics are queued.

    Takes what the upload page takes (a `.pred.jsonl`, LV-Eval `.jsonl` or a `.zip` of them). Any problem in any
    file imports nothing and the 422 names each by file, line and field; so does a row that matches no stored
    question (unless skip_unmatched). Answers that differ from the stored ones refuse the upload with 409
    unless replace=true. The same upload again changes nothing and answers the jobs already queued.
    """
    form: UploadForm = request.context.form
    try:
        done = upload_all_or_nothing([(form.file.filename, form.file.stream)], user_id=caller().id,
                                     system_override=form.system, replace=form.replace,
                                     skip_unmatched=form.skip_unmatched)
    except UploadRefused as exc:
        what = "answers differ from the stored ones" if exc.status == 409 else f"{len(exc.errors)} problem(s)"
        raise Refusal(exc.status, f"nothing was imported: {what}", errors=exc.errors) from None
    except (ImportConflict, StagingError) as exc:
        raise Refusal(409, f"nothing was imported: {exc}") from None
    result = done.result
    files = [FileImported(**{key: value for key, value in counts.items() if key != "unmatched_examples"})
             for counts in result.files]
    answer = UploadOut(upload=done.batch_id, files=files, predictions=result.predictions,
                       systems=[SystemRef(id=s.id, name=s.name) for s in result.systems], jobs=done.job_ids)
    return answer, 201, {"Location": url_for("api.get_upload", upload_id=done.batch_id)}


@bp.get("/uploads/<upload_id>")
@access(write=False)
@operation("getUpload", tags=["predictions"], resp={"HTTP_200": UploadRecord, "HTTP_404": Problem},
           path={"upload_id": "The upload's id (the `upload` of its 201)"})
def get_upload(upload_id: str):
    """An upload made with a token of this account.

    Another account's upload is not found (404), as the upload page shows each account only its own.
    """
    record = confirmed_batch(upload_id, caller().id) or abort(404, description=f"no upload {upload_id[:40]!r} of "
                                                                               "this account")
    return UploadRecord(id=record.id, files=record.files, predictions=record.predictions,
                        systems=[name for name in record.systems.splitlines() if name], created_at=utc(record.created_at))


@bp.delete("/prediction-files/<int:file_id>")
@access(write=True)
@operation("deletePredictionFile", query=DeleteQuery, tags=["predictions"],
           resp={"HTTP_200": Deleted, "HTTP_404": Problem, "HTTP_409": Problem},
           path={"file_id": "The prediction file's id (GET /api/v1/systems/{system_id} lists them)"})
def delete_prediction_file(file_id: int):
    """Delete one uploaded prediction file and its predictions, as Predictions → delete does.

    Human scores of its answers go only with force=true, and are first saved to a file on the server; without
    it, a 409 says how many would go.
    """
    upload = db.session.get(PredictionFile, file_id) or abort(404, description=f"no prediction file {file_id}")
    return delete_answer(deletion.plan_upload(upload), lambda force: deletion.delete_upload(upload, force=force))
