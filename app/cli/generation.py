"""The generate command: answer a question set with a model behind any OpenAI-compatible server."""
from __future__ import annotations

import json

import click
from flask.cli import with_appcontext
from sqlalchemy import select

from app.cli.database import upgrade_database
from app.extensions import db
from app.models import GenerationRun
from app.services.generation import runs, store
from app.services.generation.prompt_versions import PromptError, by_version
from app.services.generation.spec import (
    GenerationError,
    RunSpec,
    default_system_name,
    prepare,
)
from app.services.llm import endpoints

# Spec fields that do not change the answers: a run may be resumed with other values.
_NOT_CONTENT = ("concurrency", "budget_usd")


@click.command("generate")
@with_appcontext
@click.option("--endpoint", "endpoint_name", default=None,
              help="A configured endpoint's name (Generate → Endpoints, or judge): its base URL and its key.")
@click.option("--base-url", default=None, help="Or a server's OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1; "
              "OPENAI_API_KEY is sent only when this is OPENAI_BASE_URL's address.")
@click.option("--model", required=True, help="The model name to send.")
@click.option("--questions", "question_set", default="human_eval", show_default=True,
              help="human_eval, demo, gpt4 (96), gpt35 (181), authored, task:<name>, auto:<name>, "
              "study:<id> or ids:<id,id,…>.")
@click.option("--system", "system_name", default=None, help="Name of the system the answers are stored as "
              "[default: <model>-<context>k, plus -len with the length instruction].")
@click.option("--new-version", "existing_system", is_flag=True,
              help="Store the answers as new answer versions of the existing system named by --system "
                   "(studies keep the versions they pinned until one pins the new ones).")
@click.option("--length-instruction", is_flag=True, help="Add L-Eval's \"around N words\" to open-ended questions.")
@click.option("--context-tokens", type=click.IntRange(1), default=16000, show_default=True,
              help="The model's context window; the document gets what the answer's room leaves.")
@click.option("--max-tokens", type=click.IntRange(1), default=512, show_default=True)
@click.option("--temperature", type=click.FloatRange(0, 2), default=0.0001, show_default=True)
@click.option("--seed", type=int, default=None)
@click.option("--truncation", type=click.Choice(["leval", "fit"]), default="leval", show_default=True)
@click.option("--prompt-version", type=click.IntRange(min=1), default=None, help="leval prompt version [default: newest].")
@click.option("--concurrency", type=click.IntRange(1, 64), default=8, show_default=True)
@click.option("--budget-usd", type=click.FloatRange(min=0, min_open=True), default=None)
@click.option("--dry-run", is_flag=True, help="Print the estimate of calls and tokens; call nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def generate_command(endpoint_name, base_url, model, question_set, system_name, existing_system, length_instruction, context_tokens,
                     max_tokens, temperature, seed, truncation, prompt_version, concurrency, budget_usd, dry_run,
                     as_json):
    """Answer a question set and store the answers as a system, through --endpoint or --base-url.

    Calls are cached by content: running the same command again makes no call, and a run that
    was interrupted continues where it stopped. The metrics job is queued for the new system.
    """
    upgrade_database()
    if (endpoint_name is None) == (base_url is None):
        raise click.UsageError("give either --endpoint NAME or --base-url URL")
    try:
        prompt_id = by_version(prompt_version).id if prompt_version else None
        if endpoint_name is not None:
            base_url = endpoints.load(endpoint_name).effective_base_url
    except (PromptError, endpoints.SettingsError) as exc:
        raise click.ClickException(str(exc)) from None
    spec = RunSpec(endpoint=endpoint_name or "", base_url=base_url, model=model, question_set=question_set,
                   system_name=system_name or default_system_name(model, length_instruction, context_tokens),
                   prompt_id=prompt_id, length_instruction=length_instruction, context_tokens=context_tokens,
                   max_tokens=max_tokens, temperature=temperature, seed=seed, truncation=truncation,
                   concurrency=concurrency, budget_usd=budget_usd, existing_system=existing_system)
    if existing_system and not system_name:
        raise click.ClickException("--new-version needs --system NAME: the system to add answer versions to")
    try:
        if dry_run:
            estimate = runs.dry_run(spec)
            click.echo(json.dumps(estimate, indent=None if as_json else 2, default=str))
            return
        runs._check_budget(spec)
        prepared = prepare(spec)
        run = _run_to_resume(prepared.spec) or runs.create_run(prepared, None)
        db.session.commit()
        outcome = runs.execute(prepared, run)
    except (GenerationError, store.SystemConflict, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    metrics_job = runs.queue_metrics(run.system_id, None) if outcome.answered else None
    name, _, rows, missing = store.pred_file(run)
    result = {**runs.usage_dict(outcome.usage), "run_id": run.id, "system": run.system_name,
              "questions": run.questions, "answered": outcome.answered, "pending": outcome.pending,
              "stopped": outcome.usage.stopped, "metrics_job": metrics_job, "pred_file": name,
              "manifest": run.manifest}
    if as_json:
        click.echo(json.dumps(result))
    else:
        click.echo(f"{run.system_name}: {outcome.answered} of {run.questions} questions answered "
                   f"({outcome.usage.api_calls} API calls, {outcome.usage.cached} from the cache, "
                   f"{outcome.usage.errors} failed)")
        click.echo(f"tokens {outcome.usage.prompt_tokens} prompt + {outcome.usage.completion_tokens} completion; "
                   f"documents cut: {run.manifest['context']['documents_cut']}; tokenizer "
                   f"{run.manifest['context']['tokenizer']['method']}")
        if metrics_job:
            click.echo(f"Metrics job #{metrics_job} queued; download {name} ({rows} rows) from the Generate page.")
    if outcome.pending and outcome.usage.stopped != "budget":
        raise click.ClickException(f"{outcome.pending} questions have no answer ({run.last_error}); run again to retry")


def _run_to_resume(spec: RunSpec) -> GenerationRun | None:
    """Return the earlier command-line run of this system with the same content settings, if any."""
    wanted = {k: v for k, v in spec.params().items() if k not in _NOT_CONTENT}
    for run in db.session.scalars(select(GenerationRun).where(GenerationRun.system_name == spec.system_name,
                                                              GenerationRun.job_id.is_(None))):
        if {k: v for k, v in run.spec.items() if k not in _NOT_CONTENT} == wanted:
            return run
    return None


COMMANDS = [generate_command]
