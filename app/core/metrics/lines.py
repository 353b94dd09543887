"""Reading a file's lines as a stream: chunk by chunk, blank runs skipped fast, one line never over a limit.

The JSON-lines reader in files.py stands on this; no upload or zip member is ever held in memory whole.
"""
from __future__ import annotations

import io
from typing import BinaryIO, Iterator

# The longest JSON line any reader accepts (docs/uploads.md, "Limits"): a longer line is an error on its line and
# is skipped while reading, so one endless line never sits in memory.
MAX_LINE_BYTES = 20 * 1024 * 1024
READ_CHUNK = 1024 * 1024
_BLANK_BYTES = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.strip() removes


def _next_non_blank(chunk: bytes, pos: int) -> int:
    """The index of the first non-whitespace byte at or after pos, or -1; windows grow, so a long run costs little."""
    step, size = 256, len(chunk)
    while pos < size:
        if chunk[pos] not in _BLANK_BYTES:
            return pos
        window = chunk[pos:pos + step]
        skipped = len(window) - len(window.lstrip())
        if skipped < len(window):
            return pos + skipped
        pos, step = pos + len(window), min(step * 2, READ_CHUNK)
    return -1


def _chunks(source: bytes | BinaryIO, cr_ends_lines: bool) -> Iterator[bytes]:
    """The source in chunks; with `cr_ends_lines` CRLF and a lone CR become LF (a CR held back across chunks)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        source = io.BytesIO(source)
    held = b""
    first = source.read(max(READ_CHUNK, 3)).removeprefix(b"\xef\xbb\xbf")  # a UTF-8 BOM
    while chunk := first or source.read(READ_CHUNK):
        first = b""
        if cr_ends_lines:
            chunk = held + chunk
            held = b""
            if chunk.endswith(b"\r"):
                chunk, held = chunk[:-1], b"\r"
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        yield chunk
    if held:
        yield b"\n"


def numbered_lines(source: bytes | BinaryIO, *, cr_ends_lines: bool = False,
                   max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """Yield (line number, bytes) for each non-blank line, read chunk by chunk; None for a line over the limit.

    Runs of blank lines are skipped by searching, not line by line, so a file of 480 MB of newlines
    takes a moment and no memory.
    """
    number = 1  # the number of the line that `pending` (or the next byte) belongs to
    pending: list[bytes] = []
    pending_size = 0
    over = False
    for chunk in _chunks(source, cr_ends_lines):
        pos, size = 0, len(chunk)
        while pos < size:
            if not pending and not over:  # between lines: skip blank ones in one search
                start = _next_non_blank(chunk, pos)
                if start < 0:
                    number += chunk.count(b"\n", pos)
                    break
                last_newline = chunk.rfind(b"\n", pos, start)
                if last_newline >= 0:
                    number += chunk.count(b"\n", pos, start)
                    pos = last_newline + 1
            end = chunk.find(b"\n", pos)
            piece = chunk[pos:] if end < 0 else chunk[pos:end]
            if not over:
                pending.append(piece)
                pending_size += len(piece)
                if pending_size > max_line_bytes + 1:  # + 1: a CR before the LF is not part of the line
                    over, pending, pending_size = True, [], 0
            if end < 0:
                break
            yield number, (None if over else b"".join(pending))
            number += 1
            pending, pending_size, over = [], 0, False
            pos = end + 1
    if over or pending:
        yield number, (None if over else b"".join(pending))
