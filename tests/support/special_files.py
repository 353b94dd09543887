"""Special files for the folder importers' tests, made at test time in temporary folders: a named pipe that
cannot hang a test, and a link to a file outside the folder."""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

needs_fifos = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")


@contextmanager
def named_pipe(path: Path, *, seconds: float = 10.0) -> Iterator[Path]:
    """A named pipe at `path`. Whenever anything opens it for reading (an importer that would wait on it forever),
    `{}` is written to it and it is closed, so the test fails on its assertions instead of hanging."""
    os.mkfifo(path)
    stop = threading.Event()

    def feed() -> None:
        deadline = time.monotonic() + seconds
        while not stop.wait(0.05) and time.monotonic() < deadline:
            try:
                descriptor = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # fails while no reader has it open
            except OSError:
                continue
            try:
                os.write(descriptor, b"{}\n")
            finally:
                os.close(descriptor)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        stop.set()
        thread.join(timeout=2)


def link_outside(link: Path, target: Path, content: bytes) -> Path:
    """`link` (inside the imported folder) pointing at `target` (outside it), which holds `content`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link
