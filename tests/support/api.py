"""Helpers for the token API's tests: tokens made with the app's own service, and their headers."""
from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select
from werkzeug.routing import IntegerConverter

from app.extensions import db
from app.models import ApiToken, User
from app.models.base import utcnow
from app.services.api_tokens import create_token


def make_token(app, username: str, scope: str = "write", *, expired: bool = False, revoked: bool = False,
               name: str = "") -> str:
    """A token of the account; `expired` or `revoked` ones are made live, then ended as time or a user would."""
    with app.app_context():
        user = db.session.scalars(select(User).where(User.username == username)).one()
        made = create_token(user, scope=scope, name=name, expires_days=1 if expired else None)
        token = db.session.get(ApiToken, made.token.id)
        if expired:
            token.expires_at = utcnow() - timedelta(seconds=1)
        if revoked:
            token.revoked_at = utcnow()
        db.session.commit()
        return made.secret


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def api_rules(app):
    """(rule, method) of every route of the token API, from the app's url_map: a new route is in at once."""
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if rule.endpoint.startswith("api."):
            for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
                yield rule, method


def url_of(rule, values) -> str:
    """The rule's URL with `values` for its arguments (1 or "x" for the others)."""
    filled = {name: values.get(name, 1 if isinstance(rule._converters[name], IntegerConverter) else "x")
              for name in rule.arguments}
    return rule.build(filled, append_unknown=False)[1]


def table_counts(app) -> dict[str, int]:
    """Rows per table, but for those a request may write without changing anything (tokens' use, limits, counters)."""
    with app.app_context():
        return {table.name: db.session.scalar(select(func.count()).select_from(table))
                for table in db.metadata.sorted_tables if table.name not in ("api_tokens", "login_attempts", "data_versions")}
