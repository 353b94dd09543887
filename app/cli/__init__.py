"""Command-line interface: `python run.py <command>`.

A command's module is imported only when that command runs (or a help page lists it), so a quick
command such as `summary` never loads the services of the others.
"""
from __future__ import annotations

import functools
import importlib

import click
from flask import Flask, current_app
from flask.cli import AppGroup, ScriptInfo

# Every command, by name: the module of app/cli that defines it (in that module's COMMANDS).
COMMAND_MODULES = {
    "import-leval": "data", "load-demo": "data", "summary": "summary",
    "export": "exports", "import-annotations": "exports",
    "generate": "generation",
    "judge": "judge",
    "import-lveval": "lveval", "import-opencompass": "opencompass",
    "import-longbench": "longbench", "longbench-result": "longbench",
    "eval": "metrics", "score-metrics": "metrics",
    "serve": "serve", "worker": "serve",
    "study": "studies", "delete-system": "studies", "delete-upload": "studies", "delete-demo": "studies",
    "create-user": "users", "reset-password": "users", "users": "users",
    "verify-quotes": "quotes",
    "token": "tokens",
}
# Commands that read both sides on purpose: serving (its start-up work and its workers' jobs are about the
# ids they are given) and the demo's own commands. Every other command reads as the pages do: the real
# data once it exists beside the demo (services.demo_scope).
BOTH_SIDES = frozenset({"serve", "worker", "load-demo", "delete-demo"})


class LazyCommands(AppGroup):
    """The app's command group, loading each command's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMAND_MODULES))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMAND_MODULES:
            for command in importlib.import_module(f"app.cli.{COMMAND_MODULES[name]}").COMMANDS:
                if command.name not in BOTH_SIDES:
                    _read_as_the_pages_do(command)
                self.add_command(command)
        return super().get_command(ctx, name)


def _read_as_the_pages_do(command: click.Command) -> None:
    """Run the command (each subcommand of a group) in an app context whose reads keep the demo apart."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _read_as_the_pages_do(sub)
        return
    callback = command.callback
    if callback is None or getattr(callback, "_demo_scoped", False):
        return

    @functools.wraps(callback)
    def scoped(*args, **kwargs):
        if not current_app:  # what flask.cli.with_appcontext would do, first, so the view is set inside it
            ctx = click.get_current_context()
            ctx.with_resource(ctx.ensure_object(ScriptInfo).load_app().app_context())
        from app.services import demo_scope

        demo_scope.enter(demo_scope.AUTO)
        return callback(*args, **kwargs)

    scoped._demo_scoped = True
    command.callback = scoped


def register_cli(app: Flask) -> None:
    """Give the app the lazy command group (keeping any command an extension added)."""
    lazy = LazyCommands(name=app.cli.name)
    lazy.commands.update(app.cli.commands)
    app.cli = lazy
