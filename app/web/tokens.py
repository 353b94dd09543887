"""The account's API tokens: make one (shown once), list them with their last use, revoke one."""
from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from app.core.numbers import parse_whole_number
from app.models.tokens import TOKEN_SCOPES
from app.services.api_tokens import (
    TokenError,
    create_token,
    list_tokens,
    revoke_token,
    token_state,
)
from app.web.security import roles_required

bp = Blueprint("tokens", __name__)
EVERY_ROLE = ("admin", "researcher", "annotator")  # a token has its account's role: every account may make one


def _days(text: str) -> int | None:
    text = (text or "").strip()
    if not text:
        return None
    days = parse_whole_number(text, maximum=99_999)
    if days is None:
        raise TokenError("expiry must be blank (never) or a whole number of days")
    return days


@bp.get("")
@roles_required(*EVERY_ROLE)
def index():
    user = current_user._get_current_object()
    return render_template("tokens/index.html", tokens=list_tokens(user), state=token_state, scopes=TOKEN_SCOPES,
                           secret=None, form={})


@bp.post("")
@roles_required(*EVERY_ROLE)
def create():
    user = current_user._get_current_object()
    try:
        made = create_token(user, scope=request.form.get("scope", ""), name=request.form.get("name", ""),
                            expires_days=_days(request.form.get("expires_days", "")))
    except TokenError as exc:
        flash(f"No token was made: {exc}.", "error")
        return render_template("tokens/index.html", tokens=list_tokens(user), state=token_state,
                               scopes=TOKEN_SCOPES, secret=None, form=request.form), 400
    # The secret is rendered into this one answer and never stored: reloading the list does not show it again.
    return render_template("tokens/index.html", tokens=list_tokens(user), state=token_state, scopes=TOKEN_SCOPES,
                           secret=made.secret, made=made.token, form={})


@bp.post("/<int:token_id>/revoke")
@roles_required(*EVERY_ROLE)
def revoke(token_id: int):
    try:
        token = revoke_token(token_id, owner=current_user._get_current_object())
    except TokenError:
        abort(404)  # unknown, or another account's: the same answer
    flash(f"Token {token.prefix}… is revoked.", "success")
    return redirect(url_for("tokens.index"))
