"""The judge command: pairwise LLM judging of two prediction sets, synchronously."""
from __future__ import annotations

import json
from pathlib import Path

import click
from flask.cli import with_appcontext

from app.cli.database import upgrade_database
from app.core.judge import leval_statistics
from app.core.judge.profiles import DEFAULT as DEFAULT_PROFILE
from app.core.judge.profiles import LEVAL
from app.core.judge.profiles import PROFILES as JUDGE_PROFILES
from app.services.jobs.usage import UPPER_BOUND_KEY
from app.services.judge import (
    DEFAULT_SCOPE,
    SCOPES,
    PairError,
    PromptError,
    RunSpec,
    load_settings,
)
from app.services.judge.job import (
    JudgeRunError,
    PreparedRun,
    check_options,
    execute,
    record_finished_run,
)
from app.services.judge.evidence import with_documents
from app.services.judge.leval_files import leval_file_run
from app.services.judge.pairs import JudgePair, build_pairs
from app.services.judge.prompt_versions import (
    as_template,
    ensure_profile_prompt,
    prompt_by_version,
)
from app.services.judge.sources import Side, match_sides, resolve_side


@click.command("judge")
@with_appcontext
@click.argument("pred", metavar="PRED_FILE_OR_SYSTEM")
@click.option("--battle-with", "battle", required=True, metavar="FILE_OR_SYSTEM",
              help="The baseline: a .pred.jsonl file or a system in the database (L-Eval uses turbo-16k-0613).")
@click.option("--judge-model", default=None, help="Judge model name [default: the settings' model, else gpt-4].")
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(1, 64), help="Parallel API calls.")
@click.option("--budget-usd", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop launching calls once this much is spent (needs a price for the model).")
@click.option("--scope", type=click.Choice(list(SCOPES)), default=DEFAULT_SCOPE, show_default=True,
              help="Which questions to take from a system named in the database.")
@click.option("--prompt-version", type=click.IntRange(min=1), default=None, help="Prompt version [default: newest].")
@click.option("--temperature", type=click.FloatRange(0, 2), default=0.0, show_default=True)
@click.option("--profile", type=click.Choice(list(JUDGE_PROFILES)), default=DEFAULT_PROFILE, show_default=True,
              help="leval: L-Eval's llm_eval.py exactly (its prompt, verdict rule, max_tokens, row selection, pairing "
                   "and counting); default: LEval Studio's prompt and rules.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the counts, win rates and usage as JSON. Each of the `judgments` (two per pair) is counted "
                   "once: api_calls (a call made now), cached (a verdict from the cache, or shared with a call made "
                   "now for the same prompt), reused_errors (shared with such a call that gave no verdict), no_call "
                   "(tied by the profile without a call) or skipped (not made: budget).")
def judge_command(pred: str, battle: str, judge_model: str | None, concurrency: int, budget_usd: float | None,
                  scope: str, prompt_version: int | None, temperature: float, profile: str, as_json: bool) -> None:
    """Judge PRED against the baseline in both orders and print the win rate.

    Pairs are matched by (query, gt); a repeated pair in a file is an error. Judgments are
    cached in the database, so running again makes no API call for pairs already judged.
    With --profile leval two files are read and paired exactly as llm_eval.py does.
    """
    upgrade_database()
    settings = load_settings()
    model = judge_model or settings.model
    try:  # the prompt asked for: the newest default, a version of it, or the leval profile's own
        if prompt_version is not None:
            prompt = prompt_by_version(prompt_version)
        else:
            prompt = ensure_profile_prompt(profile)  # leval: its own; evidence: its newest; else the newest default
    except PromptError as exc:
        raise click.ClickException(str(exc)) from None
    # The service's checks on what was asked (model, temperature, profile, price), before any file is read.
    _check(RunSpec(pred, battle, model, prompt.id, temperature, scope, profile), prompt, budget_usd, settings)
    if profile == LEVAL:
        if Path(pred).is_file() and Path(battle).is_file():
            try:
                leval = leval_file_run(Path(pred), Path(battle), judge_model=model, settings=settings, scope=scope)
            except PairError as exc:
                raise click.ClickException(str(exc)) from None
            for note in leval.notes:
                click.echo(note, err=True)
            if not leval.run.pairs:
                raise click.ClickException("no row of the predictions has a query + gt in the battle file")
            summary = _execute(leval.run, concurrency, budget_usd)
            _report(leval.run, summary, None, as_json, names=(leval.pairing.system_name, leval.pairing.baseline_name))
            return
    try:
        system_side, baseline_side = resolve_side(pred, scope=scope), resolve_side(battle, scope=scope)
    except PairError as exc:
        raise click.ClickException(str(exc)) from None
    if system_side.system is not None and baseline_side.system is not None \
            and system_side.system.id == baseline_side.system.id:
        raise click.ClickException("a system cannot be judged against itself")
    pairs, unpaired_system, unpaired_baseline = match_sides(system_side, baseline_side)
    for note in system_side.notes + baseline_side.notes:
        click.echo(note, err=True)
    if unpaired_system or unpaired_baseline:
        click.echo(f"{unpaired_system} answers of {system_side.label} and {unpaired_baseline} of "
                   f"{baseline_side.label} have no counterpart and are not judged", err=True)
    if not pairs:
        raise click.ClickException(f"{system_side.label} and {baseline_side.label} share no (query, gt) pair")
    if profile == LEVAL and (system_side.system is None or baseline_side.system is None):
        raise click.ClickException("the leval profile judges two files (as llm_eval.py) or two systems")

    spec = RunSpec(system_side.label, baseline_side.label, model, prompt.id, temperature, scope, profile)
    canonical = _database_pairs(system_side, baseline_side, pairs, scope, profile)
    if canonical is not None:
        spec, pairs = RunSpec(spec.system, spec.baseline, model, prompt.id, temperature, canonical[0], profile), \
            canonical[1]
    elif profile == LEVAL:
        raise click.ClickException("the leval profile judges two systems on a whole scope; name the systems")
    documents = None
    if spec.judge_profile.shows_document:
        if canonical is None:
            raise click.ClickException("the evidence profile reads the stored documents: name two imported "
                                       "systems that answered the same questions, not files")
        try:
            pairs, documents = with_documents(pairs, as_template(prompt), model, spec.judge_profile)
        except ValueError as exc:
            raise click.ClickException(f"context tokens: {exc}") from None
    run = PreparedRun(spec, prompt, pairs, settings,
                      system_side.system.id if system_side.system else None,
                      baseline_side.system.id if baseline_side.system else None, documents)
    summary = _execute(run, concurrency, budget_usd)
    job = None
    if canonical is not None:
        job = record_finished_run(run, summary, concurrency=concurrency, budget_usd=budget_usd)
    _report(run, summary, job.id if job else None, as_json, names=(spec.system, spec.baseline))


def _check(spec: RunSpec, prompt, budget_usd: float | None, settings) -> None:
    try:
        check_options(spec, prompt, budget_usd=budget_usd, settings=settings)
    except JudgeRunError as exc:
        raise click.ClickException(str(exc)) from None


def _execute(run: PreparedRun, concurrency: int, budget_usd: float | None):
    try:
        return execute(run, concurrency=concurrency, budget_usd=budget_usd)
    except ValueError as exc:  # no key and no base URL, or a budget without a price
        raise click.ClickException(str(exc)) from None


def _report(run: PreparedRun, summary, job_id: int | None, as_json: bool, *, names: tuple[str, str]) -> None:
    """Print the run; every number carries its profile. Under leval, also llm_eval.py's own counts by name."""
    profile = run.spec.judge_profile
    # Every call this process made was settled before execute returned: its cost is what was spent.
    data = {**summary.to_cli_json(), UPPER_BOUND_KEY: False, "profile": profile.name}
    if profile.name == LEVAL:
        statistics, rates = leval_statistics(summary.results, *names)
        data["leval"] = {"statistics": statistics, "win_rates": rates}
        if names[0] == names[1] and names[0] in rates:
            data["win_rate"] = rates[names[0]]  # one name on both sides: llm_eval.py counts every win for it
    if as_json:
        click.echo(json.dumps(data))
        return
    _print_summary(run, summary, job_id, data)


def _database_pairs(system: Side, baseline: Side, pairs: list[JudgePair], preferred: str,
                    profile: str = DEFAULT_PROFILE) -> tuple[str, list[JudgePair]] | None:
    """Return (scope, pairs) when the run is exactly a database run of the two systems, else None.

    Only such runs are recorded as judge jobs: their win rate is then recomputed from the
    stored predictions like any web run's.
    """
    if system.system is None or baseline.system is None or any(p.question_id is None for p in pairs):
        return None
    wanted = {_signature(p) for p in pairs}
    for scope in dict.fromkeys([preferred, *SCOPES]):
        candidate = build_pairs(system.system, baseline.system, scope, profile)
        if profile == LEVAL and scope == preferred:
            return scope, candidate  # leval selects rows itself: the named scope as it selects it
        if len(candidate) == len(pairs) and {_signature(p) for p in candidate} == wanted:
            return scope, candidate
    return None


def _signature(pair: JudgePair) -> tuple:
    item = pair.item
    return pair.question_id, item.question, item.reference, item.system_answer, item.baseline_answer


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def _print_summary(run: PreparedRun, summary, job_id: int | None, data: dict) -> None:
    agg = summary.aggregate()
    spec = run.spec
    click.echo(f"{spec.system} vs {spec.baseline}: {len(run.pairs)} pairs in both orders; judge {spec.judge_model}, "
               f"profile {spec.judge_profile.label}, prompt {run.prompt.name} v{run.prompt.version}, "
               f"temperature {spec.temperature:g}")
    click.echo(f"L-Eval win rate:   {_percent(data['win_rate'])}  (wins {agg.wins}, losses {agg.losses}, "
               f"ties {agg.ties}; {agg.errors} errors dropped)")
    if "leval" in data:
        counts = ", ".join(f"{name} {count}" for name, count in data["leval"]["statistics"].items())
        rates = ", ".join(f"{name} {_percent(rate)}" for name, rate in data["leval"]["win_rates"].items())
        click.echo(f"llm_eval.py counts: {counts}; win rates: {rates or 'none'}")
    consistency = "n/a" if agg.consistency is None else f"{100 * agg.consistency:.1f}%"
    click.echo(f"FastChat win rate: {_percent(agg.win_rate_fastchat)}  ({agg.inconsistent} inconsistent pairs "
               f"counted as ties; position consistency {consistency})")
    if agg.ci_low is not None:
        click.echo(f"Bootstrap 95% interval (L-Eval): {agg.ci_low:.1f}% to {agg.ci_high:.1f}%")
    cost = "price unknown" if summary.cost_usd is None else f"${summary.cost_usd:.4f}"
    click.echo(f"API calls {summary.api_calls}, cached {summary.cached}, shared failures {summary.reused_errors}, "
               f"tied without a call {summary.no_call}, skipped {summary.skipped} (of {summary.judgments} judgments); "
               f"tokens {summary.prompt_tokens} prompt + {summary.completion_tokens} completion; cost {cost}")
    if summary.stopped == "budget":
        click.echo(f"Stopped at the budget: {summary.skipped} judgments not made; run again with a larger budget.")
    if summary.errors:
        click.echo(f"{summary.errors} judgments failed (kept as error rows); run again to retry them.")
    if job_id is not None:
        click.echo(f"Recorded as judge run #{job_id}.")


COMMANDS = [judge_command]
