"""Command-line interface: `python run.py <command>`."""
from __future__ import annotations

from flask import Flask


def register_cli(app: Flask) -> None:
    """Attach every command group to the app's CLI."""
    from . import data, exports, generate, judge, lveval, metrics, quotes, serve, studies, users

    for module in (data, exports, generate, judge, lveval, metrics, quotes, serve, studies, users):
        for command in module.COMMANDS:
            app.cli.add_command(command)
