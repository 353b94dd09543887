"""LV-Eval on the command line: the result table in `eval`, and `import-lveval`."""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import click
from flask.cli import with_appcontext

from app.core.metrics.files import (
    LVEVAL_LEVELS,
    FileFormatError,
    describe,
    is_lveval_file_name,
)


def lveval_groups(files: list[Path]) -> dict[Path, list[Path]]:
    """LV-Eval files by model folder (`<model>/<dataset>_<level>.jsonl`)."""
    groups: dict[Path, list[Path]] = defaultdict(list)
    for path in files:
        if is_lveval_file_name(path):
            groups[path.parent].append(path)
    return dict(groups)


def lveval_tables(files: list[Path], *, profile: str) -> tuple[list[dict], list[str]]:
    """One entry per model folder: the result.json numbers, result.csv, the averages and the notes."""
    from app.core.metrics.lveval.evaluation import evaluate_folder

    entries, errors = [], []
    for folder, paths in lveval_groups(files).items():
        try:
            run = evaluate_folder(paths, folder.name, profile=profile)
        except (OSError, FileFormatError) as exc:
            errors.append(f"{folder}: LV-Eval table not computed: {exc}")
            continue
        data = run.as_dict()
        entries.append({"file": str(folder), "task": "lveval", "system": folder.name, "n": sum(run.counts.values()),
                        "metrics": {"lveval": data["averages"]["overall"]}, "profile": profile, "skipped": 0,
                        "lveval": data})
    return entries, errors


def print_lveval(entry: dict) -> None:
    table = entry["lveval"]
    click.echo("")
    click.echo(f"LV-Eval {entry['system']} ({entry['profile']} profile; result.csv of evaluation.py, "
               f"then the paper's averages)")
    rows = [line.split(",") for line in table["result_csv"].splitlines()]
    averages = table["averages"]
    rows[0].append("avg")
    for row in rows[1:]:
        row.append(f"{averages['per_dataset'][row[0]]:.2f}")
    columns = rows[0][1:-1]
    overall = ["overall", *(f"{averages['per_level'][c]:.2f}" if c in averages["per_level"] else "" for c in columns),
               f"{averages['overall']:.2f}"]
    rows.append(overall)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))
    if averages["incomplete_datasets"]:
        click.echo(f"incomplete (fewer than {len(LVEVAL_LEVELS)} levels): {', '.join(averages['incomplete_datasets'])}")
    for note in table["notes"]:
        click.echo(f"note: {note['file']}, line {note['line']}: {note['note']}")


@click.command("import-lveval")
@with_appcontext
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--system", "system_name", default="", help="System name when PATH is one model's folder "
              "(default: the folder's name).")
@click.option("--replace", is_flag=True, help="Overwrite stored predictions that differ from the files.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def import_lveval(path: Path, system_name: str, replace: bool, as_json: bool) -> None:
    """Import LV-Eval predictions: one model folder of <dataset>_<level>.jsonl files, or a folder of them.

    Each model folder is imported whole or not at all; errors name the file, line and field.
    """
    from app.cli.database import upgrade_database
    from app.services.lveval import import_models

    upgrade_database()
    from app.cli.data import print_metrics_jobs, queue_metrics_after_import

    report = import_models(path, system=system_name or None, replace=replace)
    jobs = queue_metrics_after_import()
    if as_json:
        click.echo(json.dumps({**report.as_dict(), "metrics_jobs": jobs}, indent=2, ensure_ascii=False))
    else:
        print_metrics_jobs(jobs)
        for model in report.models:
            if model.errors:
                click.echo(f"FAILED  {model.system}: nothing imported", err=True)
                for error in model.errors:
                    click.echo(f"        {describe(error)}", err=True)
                continue
            c = model.counts
            click.echo(f"ok      {model.system}: {c['files']} files, {c['rows']} rows; {c['questions_new']} new "
                       f"questions; predictions {c['created']} new, {c['unchanged']} unchanged, {c['replaced']} "
                       f"replaced, {c['conflicts']} conflicts")
            for warning in model.warnings:
                click.echo(f"        note: {describe(warning)}")
    if not report.models:
        click.echo("Error: no LV-Eval files (<model>/<dataset>_<level>.jsonl) found", err=True)
        sys.exit(1)
    if any(model.errors for model in report.models):
        sys.exit(1)


COMMANDS = [import_lveval]
