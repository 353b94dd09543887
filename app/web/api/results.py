"""API: a study's results and human scores, and importing scores in the export's own formats."""
from __future__ import annotations

from flask import request, url_for

from app.services.exports import count_score_rows, import_annotation_bytes, iter_score_rows
from app.services.results import full_results
from app.web.api.auth import access, caller
from app.web.api.blueprint import bp
from app.web.api.paging import page_answer
from app.web.api.schemas import PageQuery, Problem, ResultsOut, ScoreRow, ScoreRowPage, ScoresForm, ScoresImported
from app.web.api.spec import operation
from app.web.api.studies import ID_PATH, study_of
from app.web.errors import Problem as Refusal

IMPORTED_FIELDS = tuple(ScoresImported.model_fields)


@bp.get("/results/<int:study_id>")
@access(write=False)
@operation("getResults", tags=["results"], resp={"HTTP_200": ResultsOut, "HTTP_404": Problem}, path=ID_PATH)
def results(study_id: int):
    """Human scores, metrics against humans (τ) and agreement (α): the `results` export, as JSON.

    For both views (every answer, or by document) and both metric profiles; each annotator's latest round.
    """
    return ResultsOut(**full_results(study_of(study_id).id))


@bp.get("/results/<int:study_id>/scores")
@access(write=False)
@operation("listScores", query=PageQuery, tags=["results"], resp={"HTTP_200": ScoreRowPage, "HTTP_404": Problem},
           path=ID_PATH)
def scores(study_id: int):
    """The study's human scores, one row per score (every round), as the scores export has them.

    Rows are by annotator, round, document, question and system.
    """
    study_id, query = study_of(study_id).id, request.context.query
    start = (query.page - 1) * query.per_page  # one page read from the database, however many scores there are
    rows = iter_score_rows(study_id, "all", offset=start, limit=query.per_page)
    return page_answer([ScoreRow(**row) for row in rows], count_score_rows(study_id, "all"), query)


@bp.post("/studies/<int:study_id>/scores")
@access(write=True)
@operation("importScores", form=ScoresForm, tags=["results"], creates=True,
           resp={"HTTP_201": ScoresImported, "HTTP_404": Problem, "HTTP_409": Problem, "HTTP_413": Problem,
                 "HTTP_422": Problem}, path=ID_PATH)
def import_scores(study_id: int):
    """Import human scores from the study's `jsonl` export or L-Eval's per-annotator files, all or nothing.

    As `python run.py import-annotations` does, in one transaction: a row naming an unknown system, a question
    outside the study or an answer version the database does not hold refuses the file with its line and field
    (422). A score that differs from the stored one refuses it too (409) unless replace=true. Unknown annotators
    are made (inactive, unless the file says) only by an admin's token; a researcher's import naming one is a 422.
    """
    study = study_of(study_id)
    form: ScoresForm = request.context.form
    report = import_annotation_bytes(form.file.stream.read(), form.file.filename, study.id, replace=form.replace,
                                     annotator=form.annotator, fmt=form.format,
                                     create_accounts=caller().role == "admin", refuse_conflicts=True)
    if report.error:
        status = 409 if report.conflicts else 422
        raise Refusal(status, f"nothing was imported: {report.error['message']}", errors=[
            {**report.error, "location": "file"}])
    answer = ScoresImported(**{name: getattr(report, name) for name in IMPORTED_FIELDS})
    return answer, 201, {"Location": url_for("api.scores", study_id=study.id)}
