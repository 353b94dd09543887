"""Ids in URLs and forms: never beyond what a database integer column holds.

Werkzeug's `int` converter takes any number of digits; an id beyond the id column's range then
reaches the database and fails there (a 500). Here such an id simply names nothing: the route does
not match (404), and id lists in query strings or forms leave it out.
"""
from __future__ import annotations

from collections.abc import Iterable

from werkzeug.routing import IntegerConverter

from app.models.ids import MAX_DB_ID, is_db_id


class DbIdConverter(IntegerConverter):
    """`<int:…>` for ids: 0 to MAX_DB_ID; anything larger does not match the route."""

    def __init__(self, map, fixed_digits: int = 0, min: int | None = None, max: int | None = None,  # noqa: A002
                 signed: bool = False) -> None:
        super().__init__(map, fixed_digits=fixed_digits, min=min, max=MAX_DB_ID if max is None else max,
                         signed=signed)


def id_list(values: Iterable[str]) -> list[int]:
    """Form or query values as ids; anything that is not a storable plain number is left out."""
    return [int(value.strip()) for value in values if is_db_id(value)]


def comma_ids(text: str | None) -> list[int]:
    """`?jobs=1,2,3` as ids (see id_list)."""
    return id_list((text or "").split(","))
