"""Reuse analyses across requests while the data they read is unchanged.

The key is every table's change counter (services/data_versions), read in one small query:
any committed insert, update or delete, by any process, alters it and the next request
recomputes. Entries live in this process only, so several server processes each warm their own.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from flask import g, has_request_context

from app.extensions import db
from app.services.data_versions import current_versions
from app.services.demo_scope import current as demo_side

T = TypeVar("T")
MAX_ENTRIES = 32
_entries: OrderedDict[Hashable, Any] = OrderedDict()
_lock = threading.Lock()


def data_fingerprint() -> tuple:
    """The database and every table's change counter: any committed write changes it."""
    return (str(db.engine.url), current_versions())


def current_fingerprint() -> tuple:
    """The fingerprint, read once per request."""
    if not has_request_context():
        return data_fingerprint()
    if "_results_fingerprint" not in g:
        g._results_fingerprint = data_fingerprint()
    return g._results_fingerprint


def cached(key: Hashable, compute: Callable[[], T]) -> T:
    """Return the value computed for this key on the current data, computing it at most once per change."""
    full_key = (current_fingerprint(), demo_side(), key)  # the demo view and the real one never share an entry
    with _lock:
        if full_key in _entries:
            _entries.move_to_end(full_key)
            return _entries[full_key]
    value = compute()
    with _lock:
        _entries[full_key] = value
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)
    return value


def clear() -> None:
    """Forget every cached analysis (benchmarks use it to time cold requests)."""
    with _lock:
        _entries.clear()
