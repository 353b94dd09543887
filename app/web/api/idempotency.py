"""Idempotency-Key on the API's creating POSTs (services/idempotency.py owns the rule): `run` wraps such a view."""
from __future__ import annotations

import json

from flask import current_app, make_response, request

from app.services import idempotency
from app.web.errors import Problem as Refusal

HEADER = "Idempotency-Key"


def _parts() -> list[tuple[str, bytes]]:
    """The request's content, in a form a retry repeats exactly (a multipart boundary changes between tries)."""
    parts = [(f"query:{key}", value.encode()) for key, value in request.args.items(multi=True)]
    if request.mimetype == "multipart/form-data":
        parts += [(f"form:{key}", value.encode("utf-8", "surrogatepass"))
                  for key, value in request.form.items(multi=True)]
        for key, upload in request.files.items(multi=True):
            content = upload.stream.read()
            upload.stream.seek(0)
            parts.append((f"file:{key}:{upload.filename}", content))
        return parts
    body = request.get_json(silent=True) if request.is_json else None
    data = json.dumps(body, sort_keys=True).encode() if body is not None else request.get_data(cache=True)
    return [*parts, ("body", data)]


def run(view, user_id: int, *args, **kwargs):
    """Run a creating view once per Idempotency-Key: a retry with the same key and request gets the first
    success's answer again (Idempotent-Replayed: true)."""
    key = request.headers.get(HEADER)
    if key is None:
        return view(*args, **kwargs)
    try:
        started = idempotency.begin(user_id, key.strip(), idempotency.fingerprint(request.method, request.path,
                                                                                   _parts()))
    except idempotency.KeyRefused as exc:
        raise Refusal(exc.status, str(exc), errors=[{"field": HEADER, "location": "header", "message": str(exc)}],
                      headers={"Retry-After": "1"} if exc.status == 409 else None) from None
    if isinstance(started, idempotency.Replay):
        response = current_app.response_class(started.body, status=started.status, mimetype="application/json")
        if started.location:
            response.headers["Location"] = started.location
        response.headers["Idempotent-Replayed"] = "true"
        return response
    try:
        response = make_response(view(*args, **kwargs))
    except BaseException:
        idempotency.forget(started)
        raise
    if 200 <= response.status_code < 300:
        idempotency.finish(started, response.status_code, response.get_data(as_text=True),
                           response.headers.get("Location", ""))
    else:
        idempotency.forget(started)
    return response
