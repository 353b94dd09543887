"""API: launch a judge, rater or generation run with the launch forms' options, or only estimate it (dry_run)."""
from __future__ import annotations

from flask import request, url_for

from app.services.generation import runs as generation_runs
from app.services.generation.spec import GenerationError, spec_for_endpoint
from app.services.jobs import DuplicateJob
from app.services.judge import JudgeRunError, RunSpec, load_settings
from app.services.judge import dry_run as judge_dry_run
from app.services.judge import launch as judge_launch
from app.services.judge.prompt_versions import prompt_for_run
from app.services.rater import RaterRunError, RaterSpec, current_rater_prompt
from app.services.rater import dry_run as rater_dry_run
from app.services.rater import launch as rater_launch
from app.services.studies.lookup import find_study
from app.web.api.auth import access, caller
from app.web.api.blueprint import bp
from app.web.api.schemas import GenerationRunIn, JudgeRunIn, Problem, RaterRunIn, RunOut
from app.web.api.spec import operation
from app.web.errors import Problem as Refusal

RUN_RESPONSES = {"HTTP_200": RunOut, "HTTP_201": RunOut, "HTTP_404": Problem, "HTTP_409": Problem,
                 "HTTP_422": Problem}


def _duplicate(exc: DuplicateJob):
    return Refusal(409, f"the same run is already {exc.job.status} (job #{exc.job.id})", job=exc.job.id)


def _refused(exc: Exception):
    field = getattr(exc, "field", None)
    return Refusal(422, str(exc), errors=[{"field": field, "location": "body" if field else None,
                                           "message": str(exc)}])


def _queued(answer: RunOut):
    return answer, 201, {"Location": url_for("api.job", job_id=answer.job)}


@bp.post("/judge-runs")
@access(write=True)
@operation("createJudgeRun", json=JudgeRunIn, resp=RUN_RESPONSES, tags=["runs"], creates=True)
def judge_run():
    """Launch a pairwise judge run of a system against a baseline (Judge page), or estimate it.

    dry_run answers the launch page's estimate (200) and queues nothing; otherwise the job is queued (201). The
    same run already queued or done is a 409 naming its job.
    """
    body: JudgeRunIn = request.context.json
    try:
        run = RunSpec(system=body.system, baseline=body.baseline,
                      judge_model=(body.judge_model or load_settings().model or "").strip(),
                      prompt_id=prompt_for_run(body.profile, body.prompt_id), temperature=body.temperature,
                      scope=body.scope, profile=body.profile, max_quotes=body.max_quotes,
                      context_tokens=body.context_tokens, json_schema=body.json_schema)
        if body.dry_run:
            return RunOut(dry_run=True, estimate=judge_dry_run(run))
        job = judge_launch(run, concurrency=body.concurrency, budget_usd=body.budget_usd, user_id=caller().id)
    except DuplicateJob as exc:
        raise _duplicate(exc) from None
    except (JudgeRunError, ValueError) as exc:  # an unknown profile is a ValueError of the profiles
        raise _refused(exc) from None
    return _queued(RunOut(dry_run=False, job=job.id))


@bp.post("/rater-runs")
@access(write=True)
@operation("createRaterRun", json=RaterRunIn, resp=RUN_RESPONSES, tags=["runs"], creates=True)
def rater_run():
    """Launch a pointwise rater run over a study's answers (Judge → Rater page), or estimate it.

    dry_run answers the estimate (200) and queues nothing; otherwise the job is queued (201).
    """
    body: RaterRunIn = request.context.json
    study = find_study(study_id=body.study)
    if study is None:
        message = f"no study with id {body.study}"
        raise Refusal(404, message, errors=[{"field": "study", "location": "body", "message": message}])
    run = RaterSpec(study.id, (body.rater_model or load_settings().model or "").strip(),
                    body.prompt_id or current_rater_prompt(body.profile).id, body.temperature, body.profile,
                    body.max_quotes, body.context_tokens, body.json_schema)
    try:
        if body.dry_run:
            return RunOut(dry_run=True, estimate=rater_dry_run(run))
        job = rater_launch(run, concurrency=body.concurrency, budget_usd=body.budget_usd, user_id=caller().id)
    except DuplicateJob as exc:
        raise _duplicate(exc) from None
    except RaterRunError as exc:
        raise _refused(exc) from None
    return _queued(RunOut(dry_run=False, job=job.id))


@bp.post("/generation-runs")
@access(write=True)
@operation("createGenerationRun", json=GenerationRunIn, resp=RUN_RESPONSES, tags=["runs"], creates=True)
def generation_run():
    """Launch a generation run on an endpoint an admin named (Generate page), or estimate it.

    dry_run answers the estimate (200) and queues nothing; otherwise the run and its job are queued (201).
    """
    body: GenerationRunIn = request.context.json
    options = body.model_dump(exclude={"dry_run", "endpoint", "model", "system_name"})
    try:
        run_spec = spec_for_endpoint(body.endpoint, model=body.model, system_name=body.system_name, **options)
        if body.dry_run:
            return RunOut(dry_run=True, estimate=generation_runs.dry_run(run_spec))
        run, job = generation_runs.launch(run_spec, user_id=caller().id)
    except DuplicateJob as exc:
        raise _duplicate(exc) from None
    except GenerationError as exc:
        raise _refused(exc) from None
    return _queued(RunOut(dry_run=False, job=job.id, run=run.id))
