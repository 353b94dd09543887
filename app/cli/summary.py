"""The summary command: row counts, quick enough to run in a health check (it loads no service beyond them)."""
from __future__ import annotations

import json

import click
from flask.cli import with_appcontext

from app.cli.database import upgrade_database
from app.services import summary


@click.command("summary")
@with_appcontext
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def summary_command(as_json: bool) -> None:
    """Print row counts."""
    upgrade_database()
    data = summary.counts()
    if as_json:
        click.echo(json.dumps(data))
    else:
        for key, value in data.items():
            click.echo(f"{key:12} {value}")


COMMANDS = [summary_command]
