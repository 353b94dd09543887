"""Field checks for parsed rows: each failure names the file, the line and the field.

Every string is checked against what the database can store (app.services.input_rules): a NUL
character, or more characters than `column` holds, is an error on its line and field.
"""
from __future__ import annotations

from sqlalchemy.orm import InstrumentedAttribute

from app.core.metrics.files import FileFormatError, Row
from app.services.input_rules import text_problem


def storable(row: Row, key: str, name: str, value: str, column: InstrumentedAttribute | None = None) -> str:
    """Return value, or raise FileFormatError when the database cannot store it."""
    problem = text_problem(value, column=column)
    if problem:
        raise FileFormatError(name, problem, line=row.line, field=key)
    return value


def require_str(row: Row, key: str, name: str, *, allow_empty: bool = False,
                column: InstrumentedAttribute | None = None) -> str:
    value = row.data.get(key)
    if value is None:
        raise FileFormatError(name, "missing", line=row.line, field=key)
    if not isinstance(value, str):
        raise FileFormatError(name, f"expected a string, got {type(value).__name__}", line=row.line, field=key)
    if not allow_empty and not value.strip():
        raise FileFormatError(name, "is empty", line=row.line, field=key)
    return storable(row, key, name, value, column)


def optional_str(row: Row, key: str, name: str, *, column: InstrumentedAttribute | None = None) -> str | None:
    value = row.data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise FileFormatError(name, f"expected a string, got {type(value).__name__}", line=row.line, field=key)
    return storable(row, key, name, value, column)


def require_str_list(row: Row, key: str, name: str, *, length: int | None = None) -> list[str]:
    value = row.data.get(key)
    if value is None:
        raise FileFormatError(name, "missing", line=row.line, field=key)
    if not isinstance(value, list):
        raise FileFormatError(name, f"expected a list, got {type(value).__name__}", line=row.line, field=key)
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise FileFormatError(
                name, f"item {index} should be a string, got {type(item).__name__}", line=row.line, field=key
            )
        storable(row, key, name, item)
    if length is not None and len(value) != length:
        raise FileFormatError(
            name, f"has {len(value)} items but 'instructions' has {length}", line=row.line, field=key
        )
    return value
