"""Metric commands: `eval` scores prediction files without a database; `score-metrics` scores stored systems."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from flask.cli import with_appcontext

from app.cli.lveval import lveval_tables, print_lveval
from app.core.metrics import METRIC_KEYS, PROFILES, evaluate_file
from app.core.metrics.evaluate import EVALUATIONS
from app.core.metrics.selection import SCOPE_ANALYSIS, SCOPE_COUNTED

PROFILE_CHOICES = click.Choice(list(PROFILES))


def expand_paths(paths: tuple[Path, ...]) -> list[Path]:
    """Files as given; folders expand to their `*.pred.jsonl` files (or `*.jsonl`, LV-Eval's naming)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.rglob("*.pred.jsonl")) or sorted(path.rglob("*.jsonl"))
            files += [p for p in found if p.is_file()]
        else:
            files.append(path)
    return files


def evaluate_paths(files: list[Path], *, profile: str, evaluation: str | None,
                   scope: str = SCOPE_COUNTED) -> tuple[list[dict], list[str]]:
    """Score each file; return (results, error messages). A bad or refused file does not stop the others.

    Scope `counted`: the rows the reference script counts (a file with none is refused, as
    auto_eval.py refuses it); `analysis`: every row by its own evaluation, LLM and human rows
    included (never L-Eval's number).
    """
    results, errors = [], []
    for path in files:
        try:
            result = evaluate_file(path, profile=profile, evaluation_override=evaluation,
                                   refuse=scope == SCOPE_COUNTED)
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            message = str(exc)
            errors.append(message if message.startswith(str(path)) else f"{path}: {message}")
            continue
        chosen = result if scope == SCOPE_COUNTED else result["analysis"]
        results.append({
            "file": str(path), "task": result["task"], "system": result["system"], "n": chosen["n"],
            "metrics": chosen["metrics"], "profile": result["profile"], "scope": scope,
            "evaluation": result["evaluation"] if scope == SCOPE_COUNTED else None,
            "skipped": result["n"] + result["skipped"] - chosen["n"],
        })
    return results, errors


def print_table(results: list[dict], profile: str, scope: str = SCOPE_COUNTED) -> None:
    keys = [key for key in METRIC_KEYS if any(key in r["metrics"] for r in results)]
    header = ["file", "task", "system", "n", *keys]
    lines = [[r["file"], r["task"], r["system"] or "", str(r["n"]),
              *[_fmt(r["metrics"].get(k)) for k in keys]] for r in results]
    widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]
    rows = ("the rows the reference script counts" if scope == SCOPE_COUNTED
            else "every row by its own evaluation (analysis only, not L-Eval's number)")
    click.echo(f"profile: {profile}; {rows} "
               "(L-Eval's 0-100 scale; avg_words and delta_words in words)")
    for row in [header, *lines]:
        click.echo("  ".join(cell.rjust(w) if i >= 3 else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))))


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


@click.command("eval")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {file, task, system, n, metrics}.")
@click.option("--profile", type=PROFILE_CHOICES, default="official", show_default=True,
              help="official reproduces the reference scripts; fixed corrects their quirks.")
@click.option("--evaluation", type=click.Choice(sorted(EVALUATIONS)), default=None,
              help="Score every row with this evaluation instead of the row's own `evaluation` field.")
@click.option("--scope", type=click.Choice([SCOPE_COUNTED, SCOPE_ANALYSIS]), default=SCOPE_COUNTED,
              show_default=True,
              help="counted: the rows auto_eval.py scores (evaluation exactly f1, rouge or exam, with the last such "
                   "row's metric; a file without one is refused); analysis: every row by its own evaluation, "
                   "LLM and human rows included (not L-Eval's number).")
def eval_command(paths: tuple[Path, ...], as_json: bool, profile: str, evaluation: str | None, scope: str) -> None:
    """Score prediction files (or folders of them) with the automatic metrics; needs no database."""
    files = expand_paths(paths)
    if not files:
        raise click.ClickException("no prediction files found")
    results, errors = evaluate_paths(files, profile=profile, evaluation=evaluation, scope=scope)
    tables, table_errors = lveval_tables(files, profile=profile)  # LV-Eval model folders: its result table
    errors += table_errors
    for message in errors:
        click.echo(f"Error: {message}", err=True)
    if as_json:
        click.echo(json.dumps(results + tables, indent=2, ensure_ascii=False))
    elif results:
        print_table(results, profile, scope)
        for entry in tables:
            print_lveval(entry)
    if errors:
        sys.exit(1)


@click.command("score-metrics")
@with_appcontext
@click.option("--system", "system_names", multiple=True, help="Only this system (repeatable); default: all.")
@click.option("--profile", type=PROFILE_CHOICES, default=None, help="Only this profile; default: both.")
def score_metrics(system_names: tuple[str, ...], profile: str | None) -> None:
    """Compute metrics for stored predictions now, without the job queue."""
    from sqlalchemy import select

    from app.cli.database import upgrade_database
    from app.extensions import db
    from app.models import System
    from app.services.metrics import score_system

    upgrade_database()
    stmt = select(System).order_by(System.name)
    if system_names:
        stmt = stmt.where(System.name.in_(system_names))
    systems = list(db.session.scalars(stmt))
    missing = set(system_names) - {s.name for s in systems}
    if missing:
        raise click.ClickException(f"no such system: {', '.join(sorted(missing))}")
    profiles = (profile,) if profile else PROFILES
    for system in systems:
        summary = score_system(system.id, profiles=profiles)
        lveval = f"; LV-Eval: {summary['lveval_rows']} rows in {summary['lveval_cells']} cells" \
            if summary.get("lveval_rows") else ""
        click.echo(f"{system.name}: {summary['predictions']} predictions scored ({', '.join(profiles)}); "
                   f"tasks: {', '.join(summary['tasks']) or 'none'}{lveval}")


COMMANDS = [eval_command, score_metrics]
