"""Whole numbers typed as text (ids, counts, days): the one owner of reading them.

`str.isdigit()` is true for '¹', '²3' and '٣' (every script's digits and superscripts); `int()` refuses
the first two (a ValueError, which answered 500) and reads the third as 3, so an id "looked like" a
number it was not. Here only ASCII digits count, and a number is bounded before it is converted, so an
input can neither fail the conversion nor reach a column it does not fit.
"""
from __future__ import annotations

import re

# `\d` would match every script's digits: only 0-9 are a number here. The converter of id routes
# (app/web/routing.py) matches the same.
ASCII_DIGITS = "[0-9]+"
_WHOLE = re.compile(ASCII_DIGITS)


def parse_whole_number(text: str | None, *, maximum: int) -> int | None:
    """The number `text` spells in ASCII digits (surrounding spaces allowed), if it is at most `maximum`; else None."""
    text = (text or "").strip()
    if len(text) > len(str(maximum)) or not _WHOLE.fullmatch(text):  # bounded before int() converts it
        return None
    value = int(text)
    return value if value <= maximum else None
