"""`import-opencompass`: OpenCompass's predictions (predictions/<model>/<dataset>.json) as systems."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from flask.cli import with_appcontext

from app.cli.data import print_metrics_jobs, queue_metrics_after_import
from app.cli.database import upgrade_database
from app.core.metrics.files import FileFormatError, describe


@click.command("import-opencompass")
@with_appcontext
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--model", "models", multiple=True, metavar="ABBR",
              help="Import only this model folder (OpenCompass's model abbr); repeatable.")
@click.option("--replace", is_flag=True, help="Overwrite stored predictions that differ from the files.")
@click.option("--skip-invalid", is_flag=True, help="Import the valid datasets even if other files have errors.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def import_opencompass(path: Path, models: tuple[str, ...], replace: bool, skip_invalid: bool, as_json: bool) -> None:
    """Import OpenCompass predictions of L-Eval, LV-Eval and LongBench (an output folder, its predictions/ or a model
    folder)."""
    from app.services.uploads.opencompass_folder import import_opencompass_folder

    upgrade_database()
    try:
        result = import_opencompass_folder(path, models=models, replace=replace, skip_invalid=skip_invalid)
    except FileFormatError as exc:
        raise click.ClickException(str(exc)) from None
    jobs = queue_metrics_after_import() if result.imported else []
    if as_json:
        click.echo(json.dumps({"files": [p.as_dict() for p in result.previews], "ignored": result.ignored,
                               "imported": result.imported, "error": result.error, "metrics_jobs": jobs}, indent=2))
    else:
        _print(result)
        print_metrics_jobs(jobs)
    if result.error or result.invalid or not result.imported:
        sys.exit(1)


def _print(result) -> None:
    imported = {name: item for item in result.imported for name in item["file"].split(", ")}
    for preview in result.previews:
        if not preview.ok:
            for error in preview.errors:
                click.echo(f"FAILED  {describe({'file': preview.name, **error})}", err=True)
            if preview.more_errors:
                click.echo(f"FAILED  {preview.name}: … and {preview.more_errors} more", err=True)
        elif preview.name in imported:
            c = imported[preview.name]
            click.echo(f"ok      {preview.name}: system {c['system']}, {preview.rows} rows matched ({c['created']} new, "
                       f"{c['unchanged']} unchanged, {c['replaced']} replaced, {c['conflicts']} conflicts)")
        else:
            click.echo(f"valid   {preview.name}: {preview.rows} rows, not imported")
    if result.ignored:
        click.echo(f"Ignored {len(result.ignored)} other .json file(s) (no benchmark's dataset): "
                   f"{', '.join(result.ignored[:5])}{' …' if len(result.ignored) > 5 else ''}")
    if result.error:
        click.echo(f"Error: {describe(result.error)}; nothing was imported.", err=True)
    elif not result.previews:
        from app.core.opencompass import LABELS, PREFIXES
        click.echo(f"Error: no OpenCompass {LABELS} predictions (predictions/<model>/"
                   f"{', '.join(p + '*.json' for p in PREFIXES)}) found.", err=True)
    elif result.invalid and not result.imported:
        click.echo(f"Nothing was imported: {len(result.invalid)} file(s) have errors (fix them, or pass "
                   "--skip-invalid to import the other datasets).", err=True)
    else:
        click.echo(f"Summary: {len(result.imported)} file(s) imported for {', '.join(result.systems)}; "
                   f"{len(result.invalid)} with errors skipped.")


COMMANDS = [import_opencompass]
