"""The range of database ids: what an INTEGER id column holds on every supported database."""
from __future__ import annotations

# The largest id both databases store: ids are INTEGER columns, 32-bit on PostgreSQL (SQLite's hold 64 bits).
MAX_DB_ID = 2 ** 31 - 1


def is_db_id(text: str) -> bool:
    """Tell whether text is a plain number a database id column can hold."""
    text = (text or "").strip()
    return text.isdigit() and len(text) <= len(str(MAX_DB_ID)) and int(text) <= MAX_DB_ID
