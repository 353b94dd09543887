"""The one reader of JSON that comes from outside: request bodies, uploaded and imported files, model replies.

Python's json recurses once per level of nesting and raises RecursionError past about a thousand (a
100,000-deep body answered 500), converts integers of any length until int() refuses 4,300 digits (a
ValueError), and a value it did read nests as deep as the code that walks it afterwards can bear. Here a
document is refused when it nests deeper than MAX_DEPTH (json's C parser stops cleanly at the recursion
limit; what it did build is measured by a loop, never by recursion), holds a number longer than
MAX_NUMBER_CHARS (stopped inside the parser, before int() converts it) or is larger than its caller
allows, and the refusal says where: line, column and the keys down to the place (the first is the field),
found by a scan of the tokens that does not recurse either.
"""
from __future__ import annotations

import json
import re
from typing import Any

# Deeper than any input the app reads (an OpenCompass file nests 5 levels, a request body 3), and far
# below where Python's json, json.dumps or a recursive walk would fail.
MAX_DEPTH = 100
# A number that long is no count, score or id: 300 digits still fit a float (1e308), so arithmetic on it
# never overflows.
MAX_NUMBER_CHARS = 300
# A whole document (an OpenCompass predictions file) read into memory at most; JSON lines have their own
# limit per line (core/metrics/lines.py) and request bodies the server's upload limit.
MAX_DOCUMENT_BYTES = 1024 * 1024 * 1024
PATH_SHOWN = 6  # keys of a refusal's path named in its message (a deep one has a hundred)

_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]|-?[0-9][0-9.eE+-]*', re.DOTALL)


class JsonRefused(ValueError):
    """JSON that is not read: why (`reason`), and where (1-based line and column, and the keys or list
    indexes from the top down to the place: `path`; its first key, when the top is an object, is the `field`)."""

    def __init__(self, reason: str, *, line: int | None = None, column: int | None = None,
                 path: tuple[str | int, ...] = ()):
        self.reason, self.line, self.column, self.path = reason, line, column, path
        super().__init__(str(self))

    @property
    def field(self) -> str | None:
        return self.path[0] if self.path and isinstance(self.path[0], str) else None

    def __str__(self) -> str:
        where = f" at line {self.line}, column {self.column}" if self.line is not None else ""
        shown = ".".join(map(str, self.path[:PATH_SHOWN])) + (".…" if len(self.path) > PATH_SHOWN else "")
        inside = f" (in {shown})" if self.path else ""
        return f"{self.reason}{where}{inside}"


class _LongNumber(Exception):
    """Raised out of json.loads by the number hooks (not a ValueError, which json would take as its own)."""


def read_json(data: bytes | str, *, max_bytes: int = MAX_DOCUMENT_BYTES, max_depth: int = MAX_DEPTH,
              max_number_chars: int = MAX_NUMBER_CHARS) -> Any:
    """Parse one JSON document, or raise JsonRefused saying why and where; never RecursionError or int()'s
    ValueError. Bytes are decoded as json.loads does (UTF-8 with or without a BOM, or UTF-16/32)."""
    if len(data) > max_bytes:
        raise JsonRefused(f"{len(data):,} bytes of JSON; at most {max_bytes:,} are read")
    text = _decoded(data) if isinstance(data, (bytes, bytearray)) else data

    def number(kind):
        def parse(token: str):
            if len(token) > max_number_chars:
                raise _LongNumber
            return kind(token)
        return parse

    try:
        value = json.loads(text, parse_int=number(int), parse_float=number(float))
    except json.JSONDecodeError as exc:
        # Where json stops on a document that is also too deep depends on how deep the caller's stack is
        # already: the first problem in the text is the one named, whichever json met first.
        earlier = _located(text[:exc.pos], max_depth, max_number_chars) if _many_brackets(text, max_depth) else None
        raise earlier or JsonRefused(f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno) from None
    except (_LongNumber, RecursionError):  # json's C parser stops at the recursion limit, cleanly
        pass
    else:
        if not _deeper_than(value, text, max_depth):
            return value
    raise _located(text, max_depth, max_number_chars) or JsonRefused(
        f"JSON nested deeper than {max_depth} levels, or a number of more than {max_number_chars} characters")


def _decoded(data: bytes) -> str:
    try:
        return bytes(data).decode(json.detect_encoding(data))
    except UnicodeDecodeError as exc:
        raise JsonRefused(f"not valid UTF-8 (byte {exc.start})") from None


def _deeper_than(value: Any, text: str, max_depth: int) -> bool:
    """Tell whether the parsed value nests deeper than max_depth: a loop over its lists and objects, depth by
    depth, not recursion; and none at all when the text has too few brackets to nest that deep."""
    if not _many_brackets(text, max_depth):
        return False
    level, depth = ([value] if isinstance(value, (dict, list)) else []), 1
    while level:
        if depth > max_depth:
            return True
        level = [child for item in level for child in (item.values() if isinstance(item, dict) else item)
                 if isinstance(child, (dict, list))]
        depth += 1
    return False


def _many_brackets(text: str, max_depth: int) -> bool:
    """Whether the text opens enough lists and objects to nest deeper than max_depth at all."""
    return text.count("[") + text.count("{") > max_depth


def _located(text: str, max_depth: int, max_number_chars: int) -> JsonRefused | None:
    """Walk the tokens (without recursion) to the first place nested deeper than max_depth or holding a
    number longer than max_number_chars, keeping the keys and indexes on the way; None if there is none."""
    frames: list[list] = []  # [is_object, key or index, expecting a key]
    for token in _TOKEN.finditer(text):
        kind = token.group()[0]
        if kind in "[{":
            if len(frames) >= max_depth:
                return _at(text, token.start(), frames, f"JSON nested deeper than {max_depth} levels")
            frames.append([kind == "{", None if kind == "{" else 0, kind == "{"])
        elif kind in "]}":
            if frames:
                frames.pop()
        elif kind == ":":
            if frames:
                frames[-1][2] = False
        elif kind == ",":
            if frames and frames[-1][0]:
                frames[-1][2] = True
            elif frames:
                frames[-1][1] += 1
        elif kind == '"':
            if frames and frames[-1][0] and frames[-1][2]:
                frames[-1][1] = _key(token.group())
        elif len(token.group()) > max_number_chars:
            return _at(text, token.start(), frames, f"a number of {len(token.group()):,} characters; at most "
                                                    f"{max_number_chars} are read")
    return None


def _key(quoted: str) -> str:
    try:
        return json.loads(quoted)
    except ValueError:
        return quoted[1:-1]


def _at(text: str, offset: int, frames: list[list], reason: str) -> JsonRefused:
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    path = tuple(frame[1] for frame in frames if frame[1] is not None)
    return JsonRefused(reason, line=line, column=column, path=path)
