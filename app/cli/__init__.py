"""Command-line interface: `python run.py <command>`.

A command's module is imported only when that command runs (or a help page lists it), so a quick
command such as `summary` never loads the services of the others.
"""
from __future__ import annotations

import importlib

import click
from flask import Flask
from flask.cli import AppGroup

# Every command, by name: the module of app/cli that defines it (in that module's COMMANDS).
COMMAND_MODULES = {
    "import-leval": "data", "load-demo": "data", "summary": "summary",
    "export": "exports", "import-annotations": "exports",
    "generate": "generation",
    "judge": "judge",
    "import-lveval": "lveval", "import-opencompass": "opencompass",
    "eval": "metrics", "score-metrics": "metrics",
    "serve": "serve", "worker": "serve",
    "study": "studies", "delete-system": "studies", "delete-upload": "studies", "delete-demo": "studies",
    "create-user": "users", "reset-password": "users", "users": "users",
    "verify-quotes": "quotes",
    "token": "tokens",
}


class LazyCommands(AppGroup):
    """The app's command group, loading each command's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMAND_MODULES))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMAND_MODULES:
            for command in importlib.import_module(f"app.cli.{COMMAND_MODULES[name]}").COMMANDS:
                self.add_command(command)
        return super().get_command(ctx, name)


def register_cli(app: Flask) -> None:
    """Give the app the lazy command group (keeping any command an extension added)."""
    lazy = LazyCommands(name=app.cli.name)
    lazy.commands.update(app.cli.commands)
    app.cli = lazy
