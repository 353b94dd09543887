"""Export commands: `export --format jsonl|csv|leval|results` and `import-annotations FILE`."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from flask.cli import with_appcontext

from app.cli.database import DB_ID, upgrade_database
from app.cli.studies import command_study
from app.core.metrics.files import describe
from app.services.exports import (
    FORMATS,
    IMPORT_FORMATS,
    ROUND_CHOICES,
    AnnotationImportReport,
    annotators_with_scores,
    export_text,
    import_annotations,
    left_out_note,
    leval_left_out,
    record_count,
    write_leval_folder,
)


@click.command("export")
@with_appcontext
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="jsonl", show_default=True,
              help="jsonl/csv: one row per score; leval: L-Eval's per-annotator file; results: every aggregate.")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="File to write, '-' for standard output; for leval without --annotator, a folder.")
@click.option("--rounds", type=click.Choice(ROUND_CHOICES), default="current", show_default=True,
              help="jsonl/csv: every round, or only each annotator's latest.")
@click.option("--annotator", default=None, help="Only this annotator's scores (leval: whose file to write).")
@click.option("--study", "study_name", default=None, help="The study's name; default: the only open study.")
@click.option("--study-id", type=DB_ID, default=None, help="The study's id, instead of --study.")
def export_command(fmt: str, out: Path, rounds: str, annotator: str | None, study_name: str | None,
                   study_id: int | None) -> None:
    """Export a study's human scores or results."""
    upgrade_database()
    study = command_study(study_name, study_id)
    if fmt == "leval" and annotator is None:
        if str(out) == "-":
            raise click.UsageError("leval writes one file per annotator: give --annotator, or a folder as --out")
        names = annotators_with_scores(study.id)
        for name, path in zip(names, write_leval_folder(out, study.id, names)):
            click.echo(f"Wrote {path}")
            note = left_out_note(leval_left_out(study.id, name))
            if note:
                click.echo(f"Warning: {path.name}: {note}", err=True)
        return
    try:
        text = export_text(fmt, study.id, rounds=rounds, annotator=annotator)
    except LookupError as exc:
        raise click.ClickException(str(exc.args[0])) from None
    if str(out) == "-":
        sys.stdout.write(text)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    lines = record_count(fmt, text)
    what = {"jsonl": f"{lines} scores", "csv": f"{lines} scores", "leval": f"{lines} documents"}.get(fmt, "one JSON object")
    click.echo(f"Wrote {out} ({fmt}: {what})", err=True)
    if fmt == "leval":
        note = left_out_note(leval_left_out(study.id, annotator))
        if note:
            click.echo(f"Warning: {out.name}: {note}", err=True)


@click.command("import-annotations")
@with_appcontext
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--replace", is_flag=True, help="Overwrite stored scores that differ from the file.")
@click.option("--annotator", default=None, help="Whose scores a leval file holds (default: files_from_<name>.jsonl).")
@click.option("--format", "fmt", type=click.Choice(IMPORT_FORMATS), default="auto", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--study", "study_name", default=None, help="The study's name; default: the only open study.")
@click.option("--study-id", type=DB_ID, default=None, help="The study's id, instead of --study.")
def import_annotations_command(file: Path, replace: bool, annotator: str | None, fmt: str, as_json: bool,
                               study_name: str | None, study_id: int | None) -> None:
    """Read back a jsonl or leval export of a study's human scores."""
    upgrade_database()
    study = command_study(study_name, study_id)
    report = import_annotations(file, study.id, replace=replace, annotator=annotator, fmt=fmt)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        _print_report(report)
    if report.error:
        sys.exit(1)


def _print_report(report: AnnotationImportReport) -> None:
    if report.error:
        click.echo(f"FAILED  {describe(report.error)} (nothing was imported)", err=True)
        return
    click.echo(
        f"ok      {report.file} ({report.format}): {report.scores} scores: {report.created} new, "
        f"{report.unchanged} unchanged, {report.replaced} replaced, {report.conflicts} conflicts"
    )
    inactive = report.annotators_created_inactive
    active = [name for name in report.annotators_created if name not in inactive]
    if active:
        click.echo(f"        created active annotators (reset their passwords to hand them over): {', '.join(active)}")
    if inactive:
        click.echo(f"        created inactive annotators: {', '.join(inactive)}")
    if report.rounds_created:
        click.echo(f"        created {report.rounds_created} annotation round(s)")
    if report.ignored_reference_scores:
        click.echo(f"        ignored {report.ignored_reference_scores} scores given to the GPT-4/Claude references")
    for example in report.conflict_examples:
        click.echo(f"        conflict {example}")
    if report.conflicts:
        click.echo(f"        {report.conflicts} differing scores were kept as stored; pass --replace to overwrite them")


COMMANDS = [export_command, import_annotations_command]
