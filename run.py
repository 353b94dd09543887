"""Entry point: `python run.py` serves the app; `python run.py <command>` runs a CLI command."""
from __future__ import annotations

import sys

import click
from flask.cli import FlaskGroup

from app import create_app

# Commands that serve or list pages; every other command runs on an app without them, which starts faster.
WEB_COMMANDS = frozenset({"serve", "routes", "run", "shell"})
HELP_OPTIONS = ("-h", "--help")
_command: list[str] = []


def cli_factory():
    return create_app(web=bool(_command) and _command[0] in WEB_COMMANDS)


class StudioGroup(FlaskGroup):
    """Flask's command group, showing only what applies here: one line per command, no --app/--env-file."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                # The first sentence, never wrapped: a list a person can scan, one command a line.
                rows.append((name, command.get_short_help_str(limit=120)))
        if rows:
            width = max(len(name) for name, _ in rows)
            formatter.write_paragraph()
            formatter.write_text("Commands:")
            for name, text in rows:
                formatter.write(f"  {name:<{width}}  {text}\n")


cli = StudioGroup(
    create_app=cli_factory, add_version_option=False, load_dotenv=False, set_debug_flag=False,
    context_settings={"help_option_names": list(HELP_OPTIONS)},
    help="LEval Studio. Without a command, `python run.py` serves the app (as `python run.py serve`).",
    epilog="Run `python run.py COMMAND --help` for a command's options.",
)
# The app comes from this file, and a bare --debug serves (see main): Flask's own options would only confuse.
cli.params = [param for param in cli.params if param.name not in ("app", "env_file", "debug")]


@cli.command("help")
@click.pass_context
def help_command(ctx: click.Context) -> None:
    """Show this list of commands."""
    click.echo(ctx.parent.get_help())


def main(argv: list[str]) -> None:
    # No command means "serve"; a bare --debug serves with Flask's dev server.
    if not argv or (argv[0].startswith("-") and argv[0] not in HELP_OPTIONS):
        argv = ["serve", *argv]
    _command[:] = argv[:1]
    cli.main(args=argv, prog_name="python run.py")


if __name__ == "__main__":
    main(sys.argv[1:])
