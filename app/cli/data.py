"""Data commands: import-leval, load-demo, summary."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from flask import current_app
from flask.cli import with_appcontext

from app.cli.database import upgrade_database
from app.core.benchmarks.registry import BENCHMARKS
from app.core.metrics.files import FileFormatError, describe
from app.services import demo
from app.services.download import DownloadError, download_human_eval
from app.services.folders import downloads_folder
from app.services.importers import ImportReport, import_path
from app.services.importers.runner import find_files

PROGRESS_MIN_BYTES = 4 * 1024 * 1024


# The report formats of the other benchmarks' model folders (their keys: app.core.benchmarks).
PLUGIN_FORMATS = frozenset(b.key for b in BENCHMARKS if b.owns_file is not None)


@click.command("import-leval")
@with_appcontext
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--download", is_flag=True, help="Fetch L-Eval's human-eval folder first (LEVAL_DOWNLOAD_BASE).")
@click.option("--allow-unmatched", is_flag=True, help="Exit 0 even if human-eval rows match no question.")
@click.option("--replace", is_flag=True, help="Overwrite stored predictions that differ from the file.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def import_leval(path: Path | None, download: bool, allow_unmatched: bool, replace: bool, as_json: bool) -> None:
    """Import an L-Eval checkout, a folder or one .jsonl file."""
    upgrade_database()
    if download:
        base = current_app.config["LEVAL_DOWNLOAD_BASE"]
        try:
            path = download_human_eval(base, downloads_folder())
        except DownloadError as exc:
            raise click.ClickException(f"download failed: {exc}") from None
        click.echo(f"Downloaded L-Eval's human-eval files to {path}", err=True)
    if path is None:
        raise click.UsageError("give a PATH, or --download")
    try:
        files, _ = find_files(path)  # for the progress bar: import_path reports the refused entries
    except FileFormatError as exc:
        raise click.ClickException(str(exc)) from None
    report = _run_import(path, files, replace=replace, quiet=as_json)
    jobs = queue_metrics_after_import()
    if as_json:
        click.echo(json.dumps({**report.as_dict(), "metrics_jobs": jobs}, indent=2))
    else:
        _print_report(report)
        print_metrics_jobs(jobs)
    if report.failed:
        sys.exit(1)
    if report.unmatched_human and not allow_unmatched:
        click.echo(
            f"Error: {report.unmatched_human} human-eval prediction rows matched no question "
            "(import the reference file first, or pass --allow-unmatched).", err=True,
        )
        sys.exit(1)


def _run_import(path: Path, files: list[Path], *, replace: bool, quiet: bool) -> ImportReport:
    size = sum(f.stat().st_size for f in files)
    if quiet or (size < PROGRESS_MIN_BYTES and len(files) < 10):
        return import_path(path, replace=replace)
    with click.progressbar(length=len(files), label="Importing", file=sys.stderr) as bar:
        return import_path(path, replace=replace, progress=lambda name: bar.update(1))


def _print_report(report: ImportReport) -> None:
    totals: dict[str, int] = {}
    for item in report.files:
        if item.error:
            click.echo(f"FAILED  {describe(item.error)}", err=True)
            continue
        c = item.counts
        if item.format in PLUGIN_FORMATS:  # another benchmark's model folder (services.benchmarks)
            line = (f"ok      {item.file}: system {c['system']}, {c['rows']} rows, {c['questions_new']} new questions; "
                    f"predictions {c['created']} new, {c['unchanged']} unchanged, {c['replaced']} replaced, "
                    f"{c['conflicts']} conflicts")
        elif item.format == "predictions":
            line = (f"ok      {item.file}: system {c['system']}, {item.rows} rows, {c['matched']} matched "
                    f"({c['created']} new, {c['unchanged']} unchanged, {c['replaced']} replaced, {c['conflicts']} conflicts), "
                    f"{c['unmatched']} unmatched")
            if c["unmatched_examples"]:
                line += " e.g. " + "; ".join(c["unmatched_examples"])
        else:
            line = (f"ok      {item.file}: {c['documents']} documents, {c['questions']} questions, "
                    f"{c['references']} references ({c['created']} new, {c['updated']} updated)")
        click.echo(line)
        for key in ("documents", "questions", "references", "matched", "unmatched", "conflicts"):
            totals[key] = totals.get(key, 0) + c.get(key, 0)
    ok = len(report.files) - len(report.failed)
    click.echo(
        f"Summary: {ok} files imported, {len(report.failed)} failed; "
        + ", ".join(f"{v} {k}" for k, v in totals.items())
    )
    for line in next_steps(totals.get("unmatched", 0), totals.get("conflicts", 0)):
        click.echo(line)


def next_steps(unmatched: int, conflicts: int) -> list[str]:
    """What to do about the rows an import left aside, under its summary."""
    lines = []
    if unmatched:
        lines.append(f"Unmatched: {unmatched} prediction rows match no imported question and were not stored (the "
                     "files above name examples). Import the task or reference file they answer first (or the whole "
                     "checkout: python run.py import-leval LEval), then run this import again: rows already stored "
                     "are left as they are. Rows of tasks whose questions L-Eval does not publish stay unmatched.")
    if conflicts:
        lines.append(f"Conflicts: {conflicts} rows give another answer than the one stored for the same system and "
                     "question, and the stored answer was kept. To take the file's answers, run this import again "
                     "with --replace: their metrics are computed again, and studies keep the versions they pinned "
                     "(python run.py study pin moves one on).")
    return lines


def queue_metrics_after_import() -> list[int]:
    """Queue the metrics of every system the import left unscored; return the jobs' ids."""
    from app.services.metrics import queue_unscored

    return [job.id for job in queue_unscored()]


def print_metrics_jobs(jobs: list[int]) -> None:
    if jobs:
        click.echo(f"Metrics: {len(jobs)} job(s) queued (#{', #'.join(map(str, jobs))}); they run while "
                   "`python run.py` (or `python run.py worker`) runs, or score now with `python run.py score-metrics`.")


@click.command("load-demo")
@with_appcontext
def load_demo() -> None:
    """Import the shipped demo data set (data/demo)."""
    upgrade_database()
    report = demo.load_demo()
    _print_report(report)
    if report.failed:
        sys.exit(1)


COMMANDS = [import_leval, load_demo]
