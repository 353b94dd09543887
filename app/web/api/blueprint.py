"""The API blueprint; its routes live in this package's view modules, its document in spec.py.

Every read answers an ETag (a strong validator of its bytes) and honours If-None-Match with a 304, so a
script polling a job or a list moves no body until something changed; answers are private to the token
that read them (Cache-Control private, Vary Authorization).
"""
from flask import Blueprint, request

from app.web.api.auth import access
from app.web.api.spec import openapi

bp = Blueprint("api", __name__)
bp.add_url_rule("/openapi.json", "openapi", access(write=False, roles=None)(openapi), methods=["GET"])


@bp.after_request
def conditional(response):
    response.vary.add("Authorization")
    # A download streamed from its stored file (services.exports.stored_export) is sent as it is read: hashing
    # its bytes for an ETag would hold the whole export in memory.
    if request.method in ("GET", "HEAD") and response.status_code == 200 and not response.direct_passthrough \
            and not response.is_streamed:
        response.headers["Cache-Control"] = "private, no-cache"
        response.add_etag()
        response.make_conditional(request.environ)
    return response
