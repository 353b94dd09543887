"""Serving: first-run bootstrap, the waitress server and the dev server."""
from __future__ import annotations

import os

import click
from flask import Flask, current_app
from flask.cli import with_appcontext

from app.cli.database import open_database, startup_lock
from app.cli.processes import serve_inherited, serve_processes
from app.services import demo
from app.services.accounts import ensure_admin
from app.services.jobs.worker import run_worker, start_workers

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5000


def demo_wanted(no_demo: bool) -> bool:
    """The demo is loaded unless --no-demo or LEVAL_DEMO=0 says otherwise."""
    return not no_demo and os.environ.get("LEVAL_DEMO", "1").strip().lower() not in ("0", "false", "no", "off")


def bootstrap(*, load_demo: bool = True) -> None:
    """Upgrade the schema (or stop on a damaged database); load the demo only into an empty one; create the first admin.

    One process at a time (startup_lock): servers and workers started together on one database
    migrate once, load the demo once and print the admin's password once.
    """
    with startup_lock():
        _bootstrap(load_demo)


def _bootstrap(load_demo: bool) -> None:
    open_database()
    check_migrated_studies()
    if load_demo and demo.database_is_empty():
        click.echo("Empty database: loading the demo data set…")
        report = demo.load_demo()
        if report.failed:
            raise click.ClickException(f"demo data failed to import: {report.failed[0].error}")
        # Score the demo now (a second or two), so the leaderboard is not empty on first start.
        from app.services.metrics import score_unscored_systems

        scored = score_unscored_systems()
        if scored:
            click.echo(f"Scored the demo systems' metrics: {', '.join(scored)}")
    created = ensure_admin()
    if created:
        user, password = created
        click.echo("=" * 60)
        click.echo(f"Created admin account '{user.username}' with password: {password}")
        click.echo("It is shown only this once. After signing in, change it on your account page:")
        click.echo("your name at the top right → Change your password.")
        click.echo("=" * 60)


def check_migrated_studies() -> None:
    """Compare the answers of studies made by a migration with their references, and share out by document the
    fixed studies shared by question before, once each."""
    from sqlalchemy import select

    from app.extensions import db
    from app.models import Study
    from app.services.studies.assignment import share_out_migrated
    from app.services.studies.references import refresh

    for study in db.session.scalars(select(Study).where(Study.references_checked.is_(False))):
        refresh(study)
    shared = share_out_migrated()
    db.session.commit()
    if shared:
        click.echo(f"Shared out by document (nothing scored moved): {', '.join(shared)}")


def run_server(app: Flask, host: str, port: int, *, debug: bool = False, threads: int = 8) -> None:
    """Serve with waitress, or Flask's dev server in debug mode."""
    click.echo(f"LEval Studio is running at http://{host}:{port}/  (Ctrl+C to stop)")
    if debug:
        app.run(host=host, port=port, debug=True, use_reloader=False)
        return
    from app.cli.wsgi import serve_wsgi

    serve_wsgi(app, host=host, port=port, threads=threads)


@click.command("serve")
@click.option("--host", default=DEFAULT_HOST, show_default=True)
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int)
@click.option("--debug", is_flag=True, help="Use Flask's development server with debugging.")
@click.option("--threads", default=8, show_default=True, type=int)
@click.option("--workers", default=None, type=int, help="Job worker threads beside the server (default LEVAL_WORKERS; 0 = none).")
@click.option("--no-demo", is_flag=True, help="Start empty: never load the demo (also LEVAL_DEMO=0).")
@click.option("--processes", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Server processes on the one port (a shared database: PostgreSQL for a lab).")
@click.option("--listen-fd", default=None, type=int, hidden=True)
@with_appcontext
def serve(host: str, port: int, debug: bool, threads: int, workers: int | None, no_demo: bool, processes: int,
          listen_fd: int | None) -> None:
    """Upgrade the database, load the demo into an empty one, start job workers and serve the app."""
    app = current_app._get_current_object()
    if listen_fd is not None:  # a child of --processes: the parent did the rest
        serve_inherited(app, listen_fd, threads)
        return
    bootstrap(load_demo=demo_wanted(no_demo))
    count = app.config["LEVAL_WORKERS"] if workers is None else workers
    # Jobs (metrics, judge runs) execute in this process unless the count is 0.
    consumer = start_workers(app, count)
    if consumer is not None:
        click.echo(f"Started {count} job worker(s).")
    try:
        if processes > 1 and not debug:
            serve_processes(app, host, port, processes, threads)
        else:
            run_server(app, host, port, debug=debug, threads=threads)
    finally:
        if consumer is not None:
            consumer.stop()


@click.command("worker")
@click.option("--workers", default=None, type=int, help="Worker threads (default LEVAL_WORKERS, at least 1).")
@with_appcontext
def worker(workers: int | None) -> None:
    """Run job workers on their own, without the web server."""
    with startup_lock():
        open_database()
    app = current_app._get_current_object()
    count = max(app.config["LEVAL_WORKERS"] if workers is None else workers, 1)
    click.echo(f"Running {count} job worker(s); Ctrl+C stops.", err=True)
    run_worker(app, count)


COMMANDS = [serve, worker]
