"""A throw-away PostgreSQL cluster in a temp folder: initdb and pg_ctl as an unprivileged user, on a free port.

Used by the tests (PostgreSQL-only tests start one when no server is given) and by CI:

    python -m tests.support.pg_cluster start DIR [--durable]   # prints the server's URL (database "postgres")
    python -m tests.support.pg_cluster stop DIR

Durability is switched off (fsync, synchronous_commit, full_page_writes) unless --durable: the
cluster is thrown away, and tests create and drop many databases.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

USER = "leval"  # the cluster's superuser; local connections are trusted


def bin_dir() -> Path | None:
    """Where initdb and pg_ctl are: PG_BIN, the newest /usr/lib/postgresql/*/bin, or the PATH."""
    candidates = [os.environ.get("PG_BIN", "")]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True)
    which = shutil.which("initdb")
    candidates.append(str(Path(which).parent) if which else "")
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            return Path(candidate)
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_owner(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run as the 'postgres' user (or nobody) when we are root."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", _owner(), "--", *command]


def _owner() -> str:
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root and no unprivileged user (postgres, nobody) to run PostgreSQL")


def make_folder() -> Path:
    """A new temp folder for a cluster, one the unprivileged owner can reach when we are root."""
    parent = Path(tempfile.mkdtemp(prefix="leval-pg-"))
    parent.chmod(0o755)
    return parent / "cluster"


def start(folder: Path, *, max_connections: int = 300, durable: bool = False) -> str:
    """Create and start a cluster in folder; return its URL (postgresql+psycopg://…/postgres).

    durable=True keeps PostgreSQL's default durability (fsync and synchronous commits), for benchmarks.
    """
    binaries = bin_dir()
    if binaries is None:
        raise RuntimeError("no PostgreSQL binaries (initdb, pg_ctl): install Debian's postgresql package")
    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        owner = pwd.getpwnam(_owner())
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        folder.chmod(0o700)
    data, port = folder / "data", _free_port()
    subprocess.run(_as_owner([str(binaries / "initdb"), "-D", str(data), "-U", USER, "--auth=trust",
                              "-E", "UTF8", "--locale=C", "--no-sync"]),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c max_connections={max_connections}"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    subprocess.run(_as_owner([str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l",
                              str(folder / "server.log"), "-w", "-t", "60", "start"]),
                   check=True, stdout=subprocess.DEVNULL)
    (folder / "port").write_text(str(port))
    url = f"postgresql+psycopg://{USER}@127.0.0.1:{port}/postgres"
    _wait(port)
    return url


def _wait(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def stop(folder: Path) -> None:
    """Stop the cluster in folder (immediately: its data is thrown away) and delete the folder."""
    folder = Path(folder).resolve()
    binaries = bin_dir()
    if binaries and (folder / "data" / "postmaster.pid").exists():
        subprocess.run(_as_owner([str(binaries / "pg_ctl"), "-D", str(folder / "data"), "-m", "immediate",
                                  "-w", "stop"]), check=False, stdout=subprocess.DEVNULL)
    shutil.rmtree(folder, ignore_errors=True)
    if folder.parent.name.startswith("leval-pg-"):  # made by make_folder
        shutil.rmtree(folder.parent, ignore_errors=True)


def main(argv: list[str]) -> int:
    durable = "--durable" in argv
    argv = [arg for arg in argv if arg != "--durable"]
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: python -m tests.support.pg_cluster start [--durable] DIR | stop DIR", file=sys.stderr)
        return 2
    if argv[0] == "start":
        print(start(Path(argv[1]), durable=durable))
    else:
        stop(Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
