"""Entry point: `python run.py` serves the app; `python run.py <command>` runs a CLI command."""
from __future__ import annotations

import sys

from flask.cli import FlaskGroup

from app import create_app


def cli_factory():
    return create_app()


cli = FlaskGroup(create_app=cli_factory, add_version_option=False, load_dotenv=False)


def main(argv: list[str]) -> None:
    # No command means "serve"; a bare --debug serves with Flask's dev server.
    if not argv or argv[0].startswith("--"):
        argv = ["serve", *argv]
    cli.main(args=argv, prog_name="python run.py")


if __name__ == "__main__":
    main(sys.argv[1:])
