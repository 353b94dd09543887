"""Serving from several processes on one port: one listening socket, inherited by N waitress children.

The parent upgrades the database, creates the first admin, runs the job workers and restarts a
child that dies; the children only serve. Everything processes must agree on lives in the
database (sign-in limits, the results cache's change counters, job claims, the job queue on
PostgreSQL), so any child may answer any request.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import click
from flask import Flask

from app.config import REPO_ROOT

RESTART_PAUSE_SECONDS = 1.0


def listening_socket(host: str, port: int) -> socket.socket:
    """Bind and listen once, in the parent; children inherit the descriptor."""
    from app.cli.wsgi import BACKLOG

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(BACKLOG)
    sock.set_inheritable(True)
    return sock


def _start_child(app: Flask, sock: socket.socket, threads: int) -> subprocess.Popen:
    env = {**os.environ, "LEVAL_INSTANCE": app.instance_path}
    if not env.get("LEVAL_DATABASE_URL"):
        env["LEVAL_DATABASE_URL"] = app.config["SQLALCHEMY_DATABASE_URI"]
    command = [sys.executable, str(REPO_ROOT / "run.py"), "serve", "--listen-fd", str(sock.fileno()),
               "--threads", str(threads), "--workers", "0"]
    return subprocess.Popen(command, env=env, pass_fds=(sock.fileno(),), cwd=str(REPO_ROOT))


def serve_processes(app: Flask, host: str, port: int, processes: int, threads: int) -> None:
    """Serve from `processes` children until SIGTERM or Ctrl+C; restart any child that exits."""
    sock = listening_socket(host, port)
    children = [_start_child(app, sock, threads) for _ in range(processes)]
    click.echo(f"LEval Studio is running at http://{host}:{port}/  ({processes} server processes; Ctrl+C to stop)")
    stopping = False

    def stop(signum, frame):
        nonlocal stopping
        stopping = True

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        while not stopping:
            time.sleep(0.2)
            for index, child in enumerate(children):
                if child.poll() is not None and not stopping:
                    click.echo(f"Server process {child.pid} exited with code {child.returncode}; starting another.",
                               err=True)
                    time.sleep(RESTART_PAUSE_SECONDS)
                    children[index] = _start_child(app, sock, threads)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        for child in children:
            if child.poll() is None:
                child.terminate()
        for child in children:
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
        sock.close()


def serve_inherited(app: Flask, fd: int, threads: int) -> None:
    """A child: serve on the parent's listening socket."""
    from app.cli.wsgi import serve_wsgi

    serve_wsgi(app, sockets=[socket.socket(fileno=fd)], threads=threads)
