"""Reuse analyses across requests while the data they read is unchanged.

An entry is valid for the change counters that can alter it (services/data_versions), read in one
small query per request: any committed write that can change it, by any process, alters them and
the next request recomputes. What one study's analysis reads is named with `study=`: a score saved
in another study leaves it valid. Bookkeeping (a token's last use, a sign-in) changes no counter.

Entries live in this process only, so several server processes each warm their own. The cache is
bounded: at most MAX_ENTRIES values, one per key (a value computed on older data is replaced, never
kept beside the new one), the least recently used dropped first.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from flask import g, has_request_context

from app.extensions import db
from app.services.data_versions import EVERY_STUDY, NO_STUDY, current_versions, versions_for
from app.services.demo_scope import current as demo_side

T = TypeVar("T")
# Each analysis of a study (its scores, one page's part, the results JSON…) is one entry; 64 hold every page of
# a few studies in both views. At 20,000 scores (bench_scale's S3) a study's scores take 7 MB and every page of
# it about 25 MB in all; the board, LV-Eval and Table 2 a few MB (docs/performance.md).
MAX_ENTRIES = 64
_entries: OrderedDict[Hashable, tuple[tuple, Any]] = OrderedDict()
_lock = threading.Lock()

__all__ = ["EVERY_STUDY", "MAX_ENTRIES", "NO_STUDY", "cached", "clear", "current_fingerprint", "data_fingerprint"]


def data_fingerprint(study=EVERY_STUDY, *, scores: bool = True) -> tuple:
    """The database and the counters that can change what reads one study (its id), every study or none."""
    return (str(db.engine.url), versions_for(current_versions(), study, scores=scores))


def current_fingerprint(study=EVERY_STUDY, *, scores: bool = True) -> tuple:
    """The fingerprint, with the counters read once per request."""
    if not has_request_context():
        return data_fingerprint(study, scores=scores)
    if "_data_versions" not in g:
        g._data_versions = current_versions()
    return (str(db.engine.url), versions_for(g._data_versions, study, scores=scores))


def cached(key: Hashable, compute: Callable[[], T], *, study=EVERY_STUDY, scores: bool = True) -> T:
    """Return the value computed for this key on the current data, computing it at most once per change.

    `study`: the study whose rows the computation reads (its id), EVERY_STUDY when it may read any
    (the safe default), NO_STUDY when it reads none (a study's save then never invalidates it).
    `scores=False`: it reads no human score (a study's metric values, judge and rater columns): a save
    leaves it valid.
    """
    fingerprint = current_fingerprint(study, scores=scores)
    slot = (demo_side(), key)  # the demo view and the real one never share an entry
    with _lock:
        entry = _entries.get(slot)
        if entry is not None and entry[0] == fingerprint:
            _entries.move_to_end(slot)
            return entry[1]
    value = compute()
    with _lock:
        _entries[slot] = (fingerprint, value)
        _entries.move_to_end(slot)
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)
    return value


def clear() -> None:
    """Forget every cached analysis (benchmarks use it to time cold requests)."""
    with _lock:
        _entries.clear()


def size() -> int:
    """How many analyses are held now."""
    with _lock:
        return len(_entries)
