"""The range of database ids, and reading an id from text: what an INTEGER id column holds on every supported database."""
from __future__ import annotations

from app.core.numbers import parse_whole_number

# The largest id both databases store: ids are INTEGER columns, 32-bit on PostgreSQL (SQLite's hold 64 bits).
MAX_DB_ID = 2 ** 31 - 1


def parse_db_id(text: str | None) -> int | None:
    """The id `text` names (ASCII digits an id column can hold), else None: the one reading of an id typed as text."""
    return parse_whole_number(text, maximum=MAX_DB_ID)

