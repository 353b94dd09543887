"""API: systems (list, detail with per-task and per-question metric values, delete), questions, the Leaderboard."""
from __future__ import annotations

from flask import abort, request

from app.extensions import db
from app.models import System
from app.services import deletion
from app.services.metrics.leaderboard import question_values, system_tasks
from app.services.metrics.leaderboard_json import leaderboard_json
from app.services.question_sets import QuestionSetError, select_questions
from app.services.uploads.overview import systems_overview
from app.web.api.auth import access
from app.web.api.blueprint import bp
from app.web.api.deleting import delete_answer
from app.web.api.paging import page_answer, page_of
from app.web.api.schemas import (
    Deleted,
    DeleteQuery,
    LeaderboardOut,
    LeaderboardQuery,
    PredictionFileOut,
    Problem,
    QuestionOut,
    QuestionPage,
    QuestionsQuery,
    QuestionValue,
    QuestionValuePage,
    QuestionValuesQuery,
    SystemDetail,
    SystemOut,
    SystemPage,
    SystemQuery,
    SystemsQuery,
    TaskValues,
)
from app.web.api.schemas.common import utc
from app.web.api.spec import operation
from app.web.errors import Problem as Refusal

SYSTEM_PATH = {"system_id": "The system's id (GET /api/v1/systems?name=… finds it by name)"}


def _out(overview) -> SystemOut:
    return SystemOut(id=overview.system.id, name=overview.system.name, predictions=overview.predictions,
                     scored=overview.scored, files=len(overview.files))


def _system(system_id: int):
    found = next((o for o in systems_overview() if o.system.id == system_id), None)
    return found or abort(404, description=f"no system with id {system_id}")


@bp.get("/systems")
@access(write=False)
@operation("listSystems", query=SystemsQuery, tags=["systems"], resp={"HTTP_200": SystemPage})
def systems():
    """List the systems, with their prediction counts and whether they are scored.

    Filters: `name` (exact) and `scored`. The list is the Predictions page's, by name.
    """
    query: SystemsQuery = request.context.query
    rows = [o for o in systems_overview() if (query.name is None or o.system.name == query.name)
            and (query.scored is None or o.scored == query.scored)]
    return page_of([_out(o) for o in rows], query)


@bp.get("/systems/<int:system_id>")
@access(write=False)
@operation("getSystem", query=SystemQuery, tags=["systems"], resp={"HTTP_200": SystemDetail, "HTTP_404": Problem},
           path=SYSTEM_PATH)
def get_system(system_id: int):
    """A system with its aggregate metric values per task and its prediction files.

    The values are the Leaderboard's system page's, under one profile; each task's per-question values are at
    /systems/{system_id}/questions.
    """
    overview = _system(system_id)
    profile = request.context.query.profile
    tasks = [TaskValues(task=task, metrics={m: value for m, (value, _) in values.items()},
                        counts={m: n for m, (_, n) in values.items()})
             for task, values in system_tasks(system_id, profile)]
    files = [PredictionFileOut(id=f.id, filename=f.filename, task=f.task, rows=f.rows, matched=f.matched,
                               unmatched=f.unmatched, created_at=utc(f.created_at)) for f in overview.files]
    return SystemDetail(**_out(overview).model_dump(), profile=profile, tasks=tasks, prediction_files=files)


@bp.get("/systems/<int:system_id>/questions")
@access(write=False)
@operation("listSystemQuestionValues", query=QuestionValuesQuery, tags=["systems"],
           resp={"HTTP_200": QuestionValuePage, "HTTP_404": Problem}, path=SYSTEM_PATH)
def system_question_values(system_id: int):
    """A system's per-question values of one metric: each answer, its value and its references.

    The Leaderboard's per-question page: `task` `*` for every task, `human_eval` for the subset.
    """
    _system(system_id)
    query: QuestionValuesQuery = request.context.query
    found = question_values(system_id, query.task, query.metric, query.profile, page=query.page, sort=query.sort,
                            per_page=query.per_page, search=query.search, document_id=query.document)
    items = [QuestionValue(question_id=v.question_id, task=v.task, document_title=v.document_title, file=v.file,
                           line=v.line_no,
                           question=v.question, prediction=v.prediction, value=v.value, others=v.others,
                           references=[{"label": label, "text": text} for label, text in v.references])
             for v in found.items] if found.page == query.page else []
    return page_answer(items, found.total, query)


@bp.delete("/systems/<int:system_id>")
@access(write=True)
@operation("deleteSystem", query=DeleteQuery, tags=["systems"],
           resp={"HTTP_200": Deleted, "HTTP_404": Problem, "HTTP_409": Problem}, path=SYSTEM_PATH)
def delete_system(system_id: int):
    """Delete a system with its predictions and files, as Predictions → delete does.

    Human scores of its answers go only with force=true, and are first saved to a file on the server; without
    it, a 409 says how many would go.
    """
    system = db.session.get(System, system_id) or abort(404, description=f"no system with id {system_id}")
    return delete_answer(deletion.plan_system(system), lambda force: deletion.delete_system(system, force=force))


@bp.get("/questions")
@access(write=False)
@operation("listQuestions", query=QuestionsQuery, tags=["questions"], resp={"HTTP_200": QuestionPage,
                                                                           "HTTP_422": Problem})
def questions():
    """List a question set's questions, in run order, with their ids.

    `set` takes any value of the commands' --questions (human_eval, task:<name>, study:<id>, ids:<…>, …); `task`
    and `document` narrow it. The ids are what `ids:` and a study's `questions` take.
    """
    query: QuestionsQuery = request.context.query
    try:
        found = select_questions(query.set)
    except QuestionSetError as exc:
        raise Refusal(422, str(exc), errors=[{"field": "set", "location": "query", "message": str(exc)}]) from None
    rows = [QuestionOut(id=q.question_id, document_id=q.document_id, task=q.task, evaluation=q.evaluation,
                        instruction=q.instruction, reference=q.reference) for q in found
            if (query.task is None or q.task == query.task) and (query.document is None or q.document_id == query.document)]
    return page_of(rows, query)


@bp.get("/leaderboard")
@access(write=False)
@operation("getLeaderboard", query=LeaderboardQuery, tags=["leaderboard"], resp={"HTTP_200": LeaderboardOut})
def leaderboard():
    """Per system, every metric the Leaderboard shows, with its profile and row counts.

    The same JSON as the page's /leaderboard/json; `benchmark` gives one benchmark's table alone (`leval`,
    `lveval`, `longbench`).
    """
    query = request.context.query
    return LeaderboardOut(**leaderboard_json(query.profile, query.benchmark))
