"""The storage's health: the database can be read and written, its file is intact, and every folder the app
writes files in (app.services.folders: instance, uploads, staging, deleted, downloads) takes a write.

`/healthz` and the start of the server ask here. Successful probes are remembered for a few
seconds per process (LEVAL_HEALTH_PROBE_SECONDS; the integrity check, which reads the whole
SQLite file, for LEVAL_HEALTH_INTEGRITY_SECONDS), so a health poller costs next to nothing;
a failure is never remembered, so recovery shows at once.
"""
from __future__ import annotations

import errno
import os
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from flask import current_app
from sqlalchemy import func, insert, select, text, update
from sqlalchemy.exc import DBAPIError

from app.extensions import db
from app.models import Setting
from app.services.folders import written_folders


@dataclass(frozen=True)
class StorageFailure:
    kind: str  # busy | full | readonly | unavailable | damaged
    message: str


STORAGE_MESSAGES = {
    "busy": "The database is busy with another write. Nothing was saved; please retry.",
    "full": "The server's disk is full. Nothing was saved; please retry once an admin has freed space.",
    "readonly": "The server cannot write to its database or its folders. Nothing was saved; please retry later.",
    "unavailable": "The database cannot be reached. Nothing was saved; please retry.",
    "damaged": "The database cannot be read: it may be damaged. Nothing was saved; tell an admin.",
}
# SQLite's primary result codes (the low byte of sqlite_errorcode).
_SQLITE_KINDS = {5: "busy", 6: "busy", 13: "full", 8: "readonly", 10: "unavailable", 14: "unavailable",
                 11: "damaged", 26: "damaged"}
# PostgreSQL SQLSTATEs (class prefix or exact code).
_POSTGRES_KINDS = {"53": "full", "25006": "readonly", "40001": "busy", "40P01": "busy", "55P03": "busy",
                   "57P01": "unavailable", "57P02": "unavailable", "57P03": "unavailable", "08": "unavailable",
                   "58": "unavailable", "XX001": "damaged", "XX002": "damaged"}
_FILE_ERRNOS = {errno.ENOSPC: "full", errno.EDQUOT: "full", errno.EFBIG: "full", errno.EROFS: "readonly",
                errno.EACCES: "readonly", errno.EPERM: "readonly", errno.EIO: "unavailable"}


def storage_failure(exc: BaseException) -> StorageFailure | None:
    """Name the storage failure behind an exception (database or file), or None when it is something else."""
    kind = None
    if isinstance(exc, DBAPIError):
        orig = exc.orig
        code = getattr(orig, "sqlite_errorcode", None)
        state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
        if code is not None:
            kind = _SQLITE_KINDS.get(code & 0xFF)
        elif state:
            kind = _POSTGRES_KINDS.get(state) or _POSTGRES_KINDS.get(state[:2])
        elif exc.connection_invalidated or type(orig).__name__ == "OperationalError":
            text = str(orig).lower()  # a driver without codes: read its words
            kind = ("busy" if "locked" in text or "busy" in text else "full" if "full" in text
                    else "readonly" if "readonly" in text or "read-only" in text else None)
            if kind is None and exc.connection_invalidated:
                kind = "unavailable"
    elif isinstance(exc, OSError) and not isinstance(exc, (ConnectionError, TimeoutError)):
        kind = _FILE_ERRNOS.get(exc.errno)
    return StorageFailure(kind, STORAGE_MESSAGES[kind]) if kind else None


PROBE_KEY = "health.probe"
PROBE_FILE = ".health-probe"
DEFAULT_PROBE_SECONDS = 2.0
DEFAULT_INTEGRITY_SECONDS = 60.0


@dataclass
class Health:
    ok: bool
    problem: str = ""  # one line: what failed and why
    kind: str = ""  # busy | full | readonly | unavailable | damaged (see app.web.errors)


@dataclass
class _Remembered:
    lock: threading.Lock = field(default_factory=threading.Lock)
    probing: threading.Lock = field(default_factory=threading.Lock)  # one probe at a time per process
    passed_at: dict[str, float] = field(default_factory=dict)


_remembered: dict[str, _Remembered] = {}


def check_storage(*, force: bool = False) -> Health:
    """Read, write and (SQLite) integrity-check the database, and write a file in every folder the app writes."""
    config = current_app.config
    memory = _remembered.setdefault(config["SQLALCHEMY_DATABASE_URI"], _Remembered())
    every = 0.0 if force else float(config.get("LEVAL_HEALTH_PROBE_SECONDS", DEFAULT_PROBE_SECONDS))
    intervals = {
        "database": every,
        "integrity": 0.0 if force else float(config.get("LEVAL_HEALTH_INTEGRITY_SECONDS", DEFAULT_INTEGRITY_SECONDS)),
    }
    probes = {"database": _read_and_write, "integrity": integrity_problem}
    for label, folder in written_folders().items():
        name = f"{label} folder {folder}"
        probes[name], intervals[name] = partial(_folder_problem, folder), every
    for name, probe in probes.items():
        if _fresh(memory, name, intervals[name]):
            continue
        # Under load many requests find the probe stale at once: one probes, the others wait for its result.
        with memory.probing:
            if _fresh(memory, name, intervals[name]):
                continue
            try:
                problem, kind = probe(), "damaged"
            except (DBAPIError, OSError) as exc:
                failure = storage_failure(exc)
                kind = failure.kind if failure else "unavailable"
                problem = f"{name}: {_one_line(getattr(exc, 'orig', None) or exc)}"
                _rollback()
            if problem:
                return Health(False, problem, kind)
            with memory.lock:
                memory.passed_at[name] = time.monotonic()
    return Health(True)


def _fresh(memory: _Remembered, name: str, interval: float) -> bool:
    with memory.lock:
        return time.monotonic() - memory.passed_at.get(name, float("-inf")) < interval


def integrity_problem() -> str:
    """A one-line description of damage SQLite finds in its file, or "" (other databases: "")."""
    with db.engine.connect() as connection:
        if connection.dialect.name != "sqlite":
            return ""
        rows = connection.execute(text("PRAGMA quick_check(3)")).scalars().all()
    return "" if rows == ["ok"] else "integrity: " + "; ".join(_one_line(row) for row in rows)


def _read_and_write() -> str:
    """Read the schema and a table, then commit a tiny write (outside the ORM session: no change counters)."""
    with db.engine.begin() as connection:
        connection.execute(select(func.count()).select_from(Setting))
        stamp = f"{time.time():.3f}"
        if not connection.execute(update(Setting).where(Setting.key == PROBE_KEY).values(value=stamp)).rowcount:
            connection.execute(insert(Setting).values(key=PROBE_KEY, value=stamp))
    return ""


def _folder_problem(folder: Path) -> str:
    """Create (when missing) the folder, then write, flush and remove a small file in it.

    The file goes through os.open/os.write, as a write of the app's own does: a read-only folder fails the
    open (EROFS, EACCES), a full disk the write (ENOSPC).
    """
    folder.mkdir(parents=True, exist_ok=True)
    # A name of this process's own: server processes sharing the instance folder probe at the same time.
    path = folder / f"{PROBE_FILE}-{os.getpid()}"
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(handle, b"ok\n")
        os.fsync(handle)
    finally:
        os.close(handle)
        path.unlink(missing_ok=True)
    return ""


def _one_line(value: object) -> str:
    return " ".join(str(value).split())[:300]


def _rollback() -> None:
    try:
        db.session.rollback()
    except Exception:  # noqa: BLE001 - the session may be unusable; the answer must still go out
        pass
