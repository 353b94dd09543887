"""LongBench on the command line: `import-longbench` and `longbench-result` (the file eval.py or result.py writes)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from flask.cli import with_appcontext

from app.core.metrics.files import FileFormatError, describe
from app.core.metrics.profiles import PROFILES


@click.command("import-longbench")
@with_appcontext
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--system", "system_name", default="", help="System name when PATH is one model's folder of v1 or "
              "LongBench-E files (default: the folder's name; v2's results files are named after their model).")
@click.option("--e", "longbench_e", is_flag=True, help="The files are LongBench-E's, where no pred_e/ folder on "
              "their path says so.")
@click.option("--v2", "v2", is_flag=True, help="The files are LongBench v2's results, wherever they are.")
@click.option("--replace", is_flag=True, help="Overwrite stored predictions that differ from the files.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def import_longbench(path: Path, system_name: str, longbench_e: bool, v2: bool, replace: bool, as_json: bool) -> None:
    """Import LongBench's predictions (pred/, pred_e/, v2's results/) or its data files.

    Reads pred/ and pred_e/ model folders (LongBench/pred.py), v2's results/ (its pred.py) and LongBench's data
    files (data/<dataset>.jsonl, <dataset>_e.jsonl: the questions and documents).

    Each model is imported whole or not at all; errors name the file, line and field.
    """
    from app.cli.database import upgrade_database
    from app.services.longbench import import_path

    if longbench_e and v2:
        raise click.UsageError("--e and --v2 name different question sets: give one")
    upgrade_database()
    from app.cli.data import print_metrics_jobs, queue_metrics_after_import

    try:
        report = import_path(path, system=system_name or None, variant="e" if longbench_e else "v2" if v2 else None,
                             replace=replace)
    except FileFormatError as exc:
        raise click.ClickException(str(exc)) from None
    jobs = queue_metrics_after_import()
    if as_json:
        click.echo(json.dumps({**report.as_dict(), "metrics_jobs": jobs}, indent=2, ensure_ascii=False))
    else:
        for model in report.models:
            who = model.system or "LongBench's data"
            if model.errors:
                click.echo(f"FAILED  {who}: nothing imported", err=True)
                for error in model.errors:
                    click.echo(f"        {describe(error)}", err=True)
                continue
            c = model.counts
            click.echo(f"ok      {who}: {c['files']} files, {c['rows']} rows; {c['questions_new']} new questions"
                       + (f", {c['documents_new']} new documents, {c['questions_placed']} questions given their text"
                          if not model.system else
                          f"; predictions {c['created']} new, {c['unchanged']} unchanged, {c['replaced']} replaced, "
                          f"{c['conflicts']} conflicts"))
            for warning in model.warnings:
                click.echo(f"        note: {describe(warning)}")
        print_metrics_jobs(jobs)
    if not report.models:
        click.echo("Error: no LongBench files (pred/<model>/<dataset>.jsonl, pred_e/…, results/<model>.jsonl, "
                   "data/<dataset>.jsonl) found", err=True)
        sys.exit(1)
    if report.failed:
        sys.exit(1)


@click.command("longbench-result")
@with_appcontext
@click.argument("models", nargs=-1, required=True)
@click.option("--e", "longbench_e", is_flag=True, help="LongBench-E: result.json of eval.py --e (by length bucket).")
@click.option("--v2", "v2", is_flag=True, help="LongBench v2: result.txt of result.py, one line per MODEL.")
@click.option("--profile", type=click.Choice(list(PROFILES)), default="official", show_default=True,
              help="official reproduces eval.py and result.py; fixed corrects their quirks (docs/longbench.md).")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the file here (default: print it).")
def longbench_result(models: tuple[str, ...], longbench_e: bool, v2: bool, profile: str, out: Path | None) -> None:
    """Write LongBench's result file (eval.py's result.json, result.py's result.txt) for stored systems.

    eval.py's result.json for one MODEL (v1, or with --e LongBench-E), or result.py's result.txt for the MODELs
    (--v2). Datasets and models come sorted by name (eval.py
    and result.py follow os.listdir); a system not scored yet is scored first."""
    from sqlalchemy import select

    from app.cli.database import upgrade_database
    from app.core.metrics.longbench.table import result_json_text, result_txt
    from app.extensions import db
    from app.models import System
    from app.services.longbench.scoring import NotScored, score_longbench_system, stored_result

    if longbench_e and v2:
        raise click.UsageError("--e and --v2 name different question sets: give one")
    if not v2 and len(models) != 1:
        raise click.UsageError("result.json is one model's: give one MODEL (several only with --v2)")
    upgrade_database()
    variant = "v2" if v2 else "e" if longbench_e else "v1"
    results = {}
    for name in models:
        system = db.session.scalars(select(System).where(System.name == name)).first()
        if system is None:
            raise click.ClickException(f"no such system: {name}")
        try:
            result = stored_result(system.id, variant, profile)
        except NotScored as exc:
            click.echo(f"{name}: {exc}; scoring its LongBench rows now", err=True)
            score_longbench_system(system.id, profiles=(profile,))
            db.session.commit()
            result = stored_result(system.id, variant, profile)
        if not result:
            label = {"v1": "LongBench", "e": "LongBench-E", "v2": "LongBench v2"}[variant]
            raise click.ClickException(f"{name} has no {label} predictions")
        results[name] = result
    text = result_txt(results) if v2 else result_json_text(results[models[0]])
    if out is None:
        click.echo(text)
    else:
        out.write_text(text, encoding="utf-8")
        click.echo(f"wrote {out}", err=True)


COMMANDS = [import_longbench, longbench_result]
