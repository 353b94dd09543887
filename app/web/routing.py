"""Ids in URLs and forms: never beyond what a database integer column holds.

Werkzeug's `int` converter takes any number of digits, in any script (`\\d`: '٣' is 3); an id beyond
the id column's range then reaches the database and fails there (a 500), and thousands of digits fail
`int()` itself. Here only ASCII digits an id column holds match: anything else simply names nothing
(the route does not match: 404), and id lists in query strings or forms leave it out.
"""
from __future__ import annotations

from collections.abc import Iterable

from flask import request
from werkzeug.routing import IntegerConverter, ValidationError

from app.core.numbers import ASCII_DIGITS
from app.models.ids import MAX_DB_ID, parse_db_id


class DbIdConverter(IntegerConverter):
    """`<int:…>` for ids: ASCII digits, 0 to MAX_DB_ID; anything else does not match the route."""

    regex = ASCII_DIGITS

    def __init__(self, map, fixed_digits: int = 0, min: int | None = None, max: int | None = None,  # noqa: A002
                 signed: bool = False) -> None:
        super().__init__(map, fixed_digits=fixed_digits, min=min, max=MAX_DB_ID if max is None else max,
                         signed=signed)

    def to_python(self, value: str) -> int:
        if len(value.lstrip("-")) > len(str(MAX_DB_ID)):  # before int(): thousands of digits fail it
            raise ValidationError()
        return super().to_python(value)


def id_list(values: Iterable[str]) -> list[int]:
    """Form or query values as ids; anything that is not a storable plain number is left out."""
    return [number for number in map(parse_db_id, values) if number is not None]


def arg_id(name: str) -> int | None:
    """`?name=<id>` as an id, or None when it is absent or not one (see parse_db_id)."""
    return parse_db_id(request.args.get(name))


def comma_ids(text: str | None) -> list[int]:
    """`?jobs=1,2,3` as ids (see id_list)."""
    return id_list((text or "").split(","))
