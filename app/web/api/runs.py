"""API: launch a judge, rater or generation run with the launch forms' options, or only estimate it (dry_run)."""
from __future__ import annotations

from flask import abort, request

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
from app.web.api.schemas import (
    ErrorBody,
    GenerationRunIn,
    JudgeRunIn,
    RaterRunIn,
    RunOut,
)
from app.web.api.spec import responses, spec

RUN_RESPONSES = {"HTTP_200": RunOut, "HTTP_201": RunOut, "HTTP_404": ErrorBody, "HTTP_409": ErrorBody,
                 "HTTP_422": ErrorBody}


def _duplicate(exc: DuplicateJob):
    return ErrorBody(error=f"the same run is already {exc.job.status} (job #{exc.job.id})", status=409,
                     job=exc.job.id), 409


def _refused(exc: Exception):
    return ErrorBody(error=str(exc), status=422), 422


@bp.post("/judge-runs")
@access(write=True)
@spec.validate(json=JudgeRunIn, resp=responses(**RUN_RESPONSES), tags=["runs"])
def judge_run():
    """A pairwise judge run of a system against a baseline (Judge page), or its dry-run estimate."""
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
        return _duplicate(exc)
    except (JudgeRunError, ValueError) as exc:  # an unknown profile is a ValueError of the profiles
        return _refused(exc)
    return RunOut(dry_run=False, job=job.id), 201


@bp.post("/rater-runs")
@access(write=True)
@spec.validate(json=RaterRunIn, resp=responses(**RUN_RESPONSES), tags=["runs"])
def rater_run():
    """A pointwise rater run over a study's answers (Judge → Rater page), or its dry-run estimate."""
    body: RaterRunIn = request.context.json
    study = find_study(study_id=body.study) or abort(404, description=f"no study with id {body.study}")
    run = RaterSpec(study.id, (body.rater_model or load_settings().model or "").strip(),
                    body.prompt_id or current_rater_prompt(body.profile).id, body.temperature, body.profile,
                    body.max_quotes, body.context_tokens, body.json_schema)
    try:
        if body.dry_run:
            return RunOut(dry_run=True, estimate=rater_dry_run(run))
        job = rater_launch(run, concurrency=body.concurrency, budget_usd=body.budget_usd, user_id=caller().id)
    except DuplicateJob as exc:
        return _duplicate(exc)
    except RaterRunError as exc:
        return _refused(exc)
    return RunOut(dry_run=False, job=job.id), 201


@bp.post("/generation-runs")
@access(write=True)
@spec.validate(json=GenerationRunIn, resp=responses(**RUN_RESPONSES), tags=["runs"])
def generation_run():
    """A generation run on an admin's named endpoint (Generate page), or its dry-run estimate."""
    body: GenerationRunIn = request.context.json
    options = body.model_dump(exclude={"dry_run", "endpoint", "model", "system_name"})
    try:
        run_spec = spec_for_endpoint(body.endpoint, model=body.model, system_name=body.system_name, **options)
        if body.dry_run:
            return RunOut(dry_run=True, estimate=generation_runs.dry_run(run_spec))
        run, job = generation_runs.launch(run_spec, user_id=caller().id)
    except DuplicateJob as exc:
        return _duplicate(exc)
    except GenerationError as exc:
        return _refused(exc)
    return RunOut(dry_run=False, job=job.id, run=run.id), 201
