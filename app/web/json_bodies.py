"""JSON request bodies are read by the one reader of outside JSON (core/json_input.py).

`request.get_json` parses a body with the app's JSON provider; here its `loads` is the reader, so no page or
API route meets RecursionError or int()'s ValueError (a 100,000-deep body answered 500): a refused body is
what any invalid one is, None to `get_json(silent=True)` and a 400 otherwise. The API names the refusal
(`refusal`, used by its validation hook: a 422 with the field and line).
"""
from __future__ import annotations

from flask import Flask, request
from flask.json.provider import DefaultJSONProvider

from app.core.json_input import JsonRefused, read_json

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class ReaderJSONProvider(DefaultJSONProvider):
    """Flask's JSON provider, reading request bodies with the reader (writing is Flask's)."""

    def loads(self, s, **kwargs):
        if kwargs:  # Flask's session cookie passes its object_hook: signed text this app wrote
            return super().loads(s, **kwargs)
        return read_json(s)


def install(app: Flask) -> None:
    app.json = ReaderJSONProvider(app)


def refusal() -> JsonRefused | None:
    """Why the request's JSON body is not read (depth, a long number, invalid JSON), or None when it is read,
    or is empty, or is no JSON body."""
    if request.method not in BODY_METHODS or not request.is_json:
        return None
    data = request.get_data(cache=True)
    if not data.strip():
        return None
    try:
        read_json(data)
    except JsonRefused as exc:
        return exc
    return None
