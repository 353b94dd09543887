"""Every file download of the app: the one place a Content-Disposition header is written.

Names come from what users typed or imported (a document's source, a study's or system's name), so
the name is sanitised first (app.core.filenames.safe_file_name: no path, no quotes, no ;, no line
break, no bidi control, the extension the content has), then sent twice as RFC 6266 asks: an ASCII
`filename="…"` for old clients and `filename*=UTF-8''…` (RFC 5987) that browsers prefer.

Werkzeug's send_file(download_name=…) encodes the same way, but only adds filename* for a non-ASCII
name, makes the ASCII fallback by dropping characters (a Chinese name becomes ".jsonl", a hidden
file) and refuses a name with a line break with a 500; so the encoding below is werkzeug's own
(its header quoting, RFC 5987 attr-chars) on a name made safe first. tests/test_architecture.py
checks no other module writes the header.
"""
from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote

from flask import Response

from app.core.filenames import ascii_fallback, safe_file_name

# What each kind of download is: its media type and the extension its file name always ends in.
KINDS = {"jsonl": ("application/x-ndjson", ".jsonl"), "csv": ("text/csv", ".csv"),
         "json": ("application/json", ".json")}
# RFC 5987 attr-char beyond letters and digits (the set werkzeug.utils.send_file uses).
_ATTR_CHARS = "!#$&+-.^_`|~"


def attachment(body: str | Iterable[bytes], name: str, kind: str) -> Response:
    """A UTF-8 `kind` file (jsonl, csv, json) the browser saves under the sanitised `name`.

    `body` is the whole text, or its UTF-8 bytes in pieces, sent as they come; those pieces must need
    no request context (services.exports.stored_export reads them from a file).
    """
    mimetype, extension = KINDS[kind]
    response = Response(body.encode("utf-8") if isinstance(body, str) else body,
                        content_type=f"{mimetype}; charset=utf-8")
    safe = safe_file_name(name, extension)
    response.headers.set("Content-Disposition", "attachment", filename=ascii_fallback(safe),
                         **{"filename*": f"UTF-8''{quote(safe, safe=_ATTR_CHARS)}"})
    return response
