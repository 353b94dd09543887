"""Every error answer of the app: one styled page (with the layout and menu) or JSON for API routes.

The token API (under the prefix `register_error_handlers` is given) answers RFC 9457 problem documents
(`application/problem+json`: type, title, status, detail, instance, and `errors`, the list of fields at
fault, on every 4xx); the pages' own JSON routes answer {"error", "status"}. A view refuses with
`Problem` when it has more to say than abort() takes (the fields at fault, the job that is already queued).

HTTP errors (400, 403, 404, 405, 413, 429, 500, …) and storage failures end here. A storage
failure (the database busy, the disk full, the database or the instance folder read-only,
unreachable or damaged) answers 503 with Retry-After and says that nothing was saved; any other
unexpected exception is a 500 that shows no internals.
"""
from __future__ import annotations

import json
import re
from http import HTTPStatus

from flask import Flask, Response, current_app, jsonify, render_template, request
from flask_wtf.csrf import CSRFError
from markupsafe import escape
from sqlalchemy.exc import DataError, DBAPIError
from werkzeug.exceptions import HTTPException, InternalServerError

from app.extensions import db
from app.services.health import StorageFailure, storage_failure

# JSON routes: /…/api/…, /…/api, *.json, /leaderboard/json and the question page's document fetch.
API_PATH = re.compile(r"(^|/)api(/|$)|\.json$|/json$|^/annotate/document/")
# File downloads (exports, even of .json files) are followed by a browser: sign-in redirects, errors are pages.
DOWNLOAD_PATH = re.compile(r"(^|/)export/")
RETRY_AFTER_SECONDS = 2

TITLES = {
    400: "Bad request", 401: "Sign-in required", 403: "Not allowed", 404: "Page not found",
    405: "Method not allowed", 409: "Conflict", 413: "Too large", 429: "Too many requests",
    500: "Something went wrong", 503: "Service unavailable",
}
MESSAGES = {
    400: "The request could not be understood.",
    403: "Your account is not allowed to open this page. Ask an admin if you need it.",
    404: "There is nothing at this address. It may have been deleted, or the link is mistyped.",
    405: "This address does not take {method} requests.",
    413: "The request is larger than the server accepts.",
    429: "Too many requests in a short time. Wait a moment and try again.",
    500: "The server hit an unexpected error; nothing of it is shown here. Try again, or tell an admin.",
    503: "The service is unavailable for a moment. Try again shortly.",
}
CSRF_MESSAGE = "The page's security token is missing or stale. Reload the page and try again."
# The database refused a value (PostgreSQL: too long for its column, or a NUL character). Input is checked
# before it gets there (app.services.input_rules); this is the net for a boundary that missed a rule.
REFUSED_VALUE_MESSAGE = ("A value is too long for its field or holds a character the database cannot store "
                         "(such as \\u0000). Nothing was saved.")


PROBLEM_JSON = "application/problem+json"
# Headers an error keeps from the exception that raised it.
KEPT_HEADERS = ("allow", "retry-after", "www-authenticate", "ratelimit-limit", "ratelimit-remaining",
                "ratelimit-reset", "ratelimit-policy")
# The field each kind of refusal is about when the view names none: every 4xx of the token API lists one.
DEFAULT_FIELDS = {401: ("Authorization", "header"), 403: ("Authorization", "header"),
                  415: ("Content-Type", "header"), 413: (None, "body")}


class Problem(HTTPException):
    """A refusal with more to say than abort() takes: the fields at fault, and extra members (`job`, …)."""

    def __init__(self, status: int, detail: str, *, errors: list[dict] | None = None,
                 headers: dict | None = None, **extra):
        self.code = status
        super().__init__(description=detail)
        self.errors = errors
        self.extra = extra
        self.extra_headers = headers or {}

    def get_headers(self, environ=None, scope=None):
        return [*super().get_headers(environ, scope), *self.extra_headers.items()]


def is_problem_request() -> bool:
    """The token API: its answers are problem documents."""
    prefix = current_app.extensions.get("problem_json_prefix")
    return bool(prefix) and (request.path == prefix or request.path.startswith(prefix + "/"))


def field_errors(status: int, message: str, errors: list[dict] | None) -> list[dict]:
    """The fields at fault: the view's, or the one this kind of refusal is about (a 404's path argument)."""
    if errors:
        return [{"file": None, "line": None, "field": None, "location": None, **error} for error in errors]
    field, location = DEFAULT_FIELDS.get(status, (None, None))
    if status == 404 and request.view_args:
        field, location = next(iter(request.view_args)), "path"
    return [{"file": None, "line": None, "field": field, "location": location, "message": message}]


def problem_body(status: int, message: str, *, errors: list[dict] | None = None, **extra) -> dict:
    """An RFC 9457 problem document; `error` repeats `detail` for scripts written against API 1.0."""
    try:
        title = HTTPStatus(status).phrase
    except ValueError:
        title = TITLES.get(status, "Error")
    body = {"type": "about:blank", "title": title, "status": status, "detail": message, "instance": request.path,
            "error": message}
    if 400 <= status < 500 or errors:
        body["errors"] = field_errors(status, message, errors)
    body.update(extra)
    return body


def problem_response(status: int, message: str, *, headers: dict | None = None, errors: list[dict] | None = None,
                     **extra) -> Response:
    response = current_app.response_class(json.dumps(problem_body(status, message, errors=errors, **extra)),
                                          status=status, mimetype=PROBLEM_JSON)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def is_api_request() -> bool:
    """Tell whether the request wants JSON: an API path, a JSON body, or an Accept header preferring JSON."""
    if request.is_json or request.accept_mimetypes.best == "application/json":
        return True
    return bool(API_PATH.search(request.path)) and not DOWNLOAD_PATH.search(request.path)


def error_response(status: int, message: str, *, title: str | None = None, headers: dict | None = None,
                   errors: list[dict] | None = None, **extra) -> Response:
    """Answer an error: a problem document on the token API, JSON {"error", "status", …extra} on other API
    routes, else the styled page."""
    if is_problem_request():
        return problem_response(status, message, headers=headers, errors=errors, **extra)
    if is_api_request():
        response = jsonify(error=message, status=status, **({"errors": errors} if errors else {}), **extra)
    else:
        response = Response(_page(status, title or TITLES.get(status, "Error"), message), mimetype="text/html")
    response.status_code = status
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def _page(status: int, title: str, message: str) -> str:
    try:
        return render_template("error.html", status=status, title=title, message=message)
    except Exception:  # noqa: BLE001 - the layout itself failed (say, the database is gone): a plain page
        return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)} · LEval Studio'
                f'</title><link rel="stylesheet" href="/static/css/app.css"></head><body><main id="main" class="page">'
                f'<h1>{escape(title)}</h1><p>{escape(message)}</p><p><a href="/">LEval Studio</a></p></main></body>'
                f'</html>')


# -- storage failures -------------------------------------------------------------------------------


def storage_failure_response(failure: StorageFailure) -> Response:
    """503 with Retry-After; JSON {"error", "retryable": true} on the API."""
    return error_response(503, failure.message, title="Nothing was saved",
                          headers={"Retry-After": str(RETRY_AFTER_SECONDS)}, retryable=True)


# -- registration -----------------------------------------------------------------------------------


def _message(exc: HTTPException) -> str:
    code = exc.code or 500
    if exc.description and exc.description != type(exc).description:
        return str(exc.description)  # a view's own words, e.g. abort(404, description="no study 'x'")
    return MESSAGES.get(code, str(exc.description or TITLES.get(code, "Error"))).format(method=request.method)


def register_error_handlers(app: Flask, *, problem_json_prefix: str | None = None) -> None:
    """Render every error through error_response; answers under `problem_json_prefix` are problem documents."""
    app.extensions["problem_json_prefix"] = problem_json_prefix

    @app.errorhandler(CSRFError)
    def csrf_failed(exc: CSRFError):
        return error_response(400, CSRF_MESSAGE, title="Reload the page", reload=True)

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        if exc.code is None or exc.code < 400:
            return exc
        if exc.code >= 500 and exc.code != 503:
            _rollback()
        headers = {k: v for k, v in exc.get_headers() if k.lower() in KEPT_HEADERS}
        if isinstance(exc, Problem):
            return error_response(exc.code, str(exc.description), headers=headers, errors=exc.errors, **exc.extra)
        return error_response(exc.code, _message(exc), headers=headers)

    @app.errorhandler(DBAPIError)
    def database_error(exc: DBAPIError):
        _rollback()
        if isinstance(exc, DataError):
            app.logger.warning("value refused by the database on %s %s: %s", request.method, request.path, exc.orig)
            return error_response(400, REFUSED_VALUE_MESSAGE)
        failure = storage_failure(exc)
        if failure is None:
            return _unexpected(app, exc)
        app.logger.warning("storage failure (%s) on %s %s: %s", failure.kind, request.method, request.path,
                           exc.orig)
        return storage_failure_response(failure)

    @app.errorhandler(OSError)
    def file_error(exc: OSError):
        failure = storage_failure(exc)
        if failure is None:
            return _unexpected(app, exc)
        _rollback()
        app.logger.warning("storage failure (%s) on %s %s: %s", failure.kind, request.method, request.path, exc)
        return storage_failure_response(failure)

    @app.errorhandler(InternalServerError)
    def internal_error(exc: InternalServerError):
        _rollback()
        return error_response(500, MESSAGES[500])


def _unexpected(app: Flask, exc: BaseException) -> Response:
    """Not a storage failure: let Flask log it and answer through internal_error (tests see it raised)."""
    raise exc


def _rollback() -> None:
    try:
        db.session.rollback()
    except Exception:  # noqa: BLE001 - the session may be unusable; the answer must still go out
        pass
