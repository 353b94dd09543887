"""Score exports kept on disk while the data they were made from is unchanged (instance/cache/exports).

The first download streams its rows from the database into a file, and every download is sent
from a file; the same download on unchanged data (the study's change counters, the demo or real
view, the format, the rounds, the annotator and the app's version) reuses the file. Both hold one
piece at a time in memory, whatever the study's size. At most KEPT_FILES files stay, the least
recently used removed first; a failed write leaves no file behind.
"""
from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

from app.core.version import __version__
from app.services.cache import current_fingerprint
from app.services.demo_scope import current as demo_side
from app.services.exports.writers import export_chunks, export_text
from app.services.folders import export_cache_folder

KEPT_FILES = 16
READ_BYTES = 64 * 1024
STORED_FORMATS = ("jsonl", "csv", "leval")  # `results` is an analysis, cached as one (services/cache)


def stored_export(fmt: str, study_id: int, *, rounds: str = "all", annotator: str | None = None) -> Iterator[bytes]:
    """The export's UTF-8 bytes in pieces, read from the file made on the same data (made now when there is none).

    The file is written whole before the first piece is returned, so the pieces need no database, no
    request and no app context: a response can send them after the request's work has ended.
    """
    if fmt not in STORED_FORMATS:
        return iter([export_text(fmt, study_id, rounds=rounds, annotator=annotator).encode("utf-8")])
    identity = (current_fingerprint(study_id), demo_side(), fmt, rounds, annotator, __version__)
    path = export_cache_folder() / f"{hashlib.sha256(repr(identity).encode()).hexdigest()[:40]}.{fmt}"
    try:
        handle = open(path, "rb")
        os.utime(path)  # recently used: the last to go
    except FileNotFoundError:
        handle = _make(export_chunks(fmt, study_id, rounds=rounds, annotator=annotator), path)
    return _read(handle)


def _read(handle) -> Iterator[bytes]:
    with handle:
        while piece := handle.read(READ_BYTES):
            yield piece


def _make(chunks: Iterator[str], path: Path):
    """Write the pieces to the file (through a partial file, renamed when complete) and return it open for reading."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{uuid.uuid4().hex}.part")
    try:
        with open(partial, "wb") as out:
            for chunk in chunks:
                out.write(chunk.encode("utf-8"))
        handle = open(partial, "rb")  # open before the rename: pruning by another request cannot take it away
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)  # only left when writing failed
    _prune(path.parent)
    return handle


def _prune(folder: Path) -> None:
    """Keep the KEPT_FILES most recently used exports."""
    files = []
    for entry in os.scandir(folder):
        if entry.is_file() and not entry.name.endswith(".part"):
            try:
                files.append((entry.stat().st_mtime, entry.path))
            except FileNotFoundError:
                continue  # another request removed it meanwhile
    for _, stale in sorted(files, reverse=True)[KEPT_FILES:]:
        Path(stale).unlink(missing_ok=True)
