"""One writer at a time per process on SQLite, waiting on a lock instead of SQLite's busy handler.

SQLite lets one connection write at a time. A second writer's busy handler sleeps in growing steps
(up to 100 ms) and polls, so under many simultaneous saves some wait far longer than the writes
take. Threads of one process queue on a lock instead and start the moment the writer before them
commits. Other processes (workers, a second server) still meet the busy timeout. PostgreSQL locks
rows itself: there the lock is not taken.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

from app.extensions import db

_LOCK = threading.Lock()


@contextmanager
def one_writer():
    """Hold this process's SQLite write lock for the block (no lock on other databases)."""
    if db.engine.dialect.name != "sqlite":
        yield
        return
    with _LOCK:
        yield
