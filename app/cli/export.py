"""Export command."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import click
from flask.cli import with_appcontext

from ..services.export import FORMATS, export_scores
from .common import upgrade_database


@click.command("export")
@with_appcontext
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="jsonl", show_default=True)
@click.option("--out", "out_path", required=True, help="File to write, or '-' for standard output.")
def export_command(fmt: str, out_path: str) -> None:
    """Write one row per current human score (each annotator's latest round)."""
    upgrade_database()
    if out_path == "-":
        count = export_scores(fmt, sys.stdout)
    else:
        target = Path(out_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        # Write beside the target and rename, so a failed export never leaves half a file.
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                count = export_scores(fmt, fh)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    click.echo(f"Exported {count} scores as {fmt} to {out_path}.", err=True)


COMMANDS = [export_command]
