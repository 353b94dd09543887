"""Your account: change your password, sign out everywhere else, and a way to your API tokens.

Every signed-in user reaches it from their name in the top bar. Each part of the page is a section
template of its own (templates/account/_*.html) with a POST route here, so a new part adds one of each.
"""
from __future__ import annotations

import math

from flask import (
    Blueprint,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user
from flask_wtf import FlaskForm
from wtforms import BooleanField, PasswordField
from wtforms.validators import DataRequired, EqualTo, Length

from app.services.accounts import (
    MIN_PASSWORD,
    AccountError,
    change_password,
    sign_out_everywhere,
)
from app.services.api_tokens import count_active
from app.services.login_limits import address_key, user_key
from app.web.sessions import renew_session

bp = Blueprint("account", __name__)


class PasswordForm(FlaskForm):
    current_password = PasswordField("Current password", validators=[DataRequired("Type your current password."),
                                                                     Length(max=200)])
    new_password = PasswordField("New password", validators=[DataRequired("Type a new password."), Length(max=200)])
    new_password_again = PasswordField("New password again", validators=[
        EqualTo("new_password", message="The two new passwords differ; type the same one twice.")])
    # Ticked on the page: a password is most often changed because someone else may know it, and a token
    # they made would outlive the change. A browser leaves an unticked box out, which reads as False.
    end_tokens = BooleanField("Also end my API tokens")


def _page(status: int = 200):
    """The account page (a refused form is shown again empty: passwords are never written back into a page)."""
    return render_template("account/index.html", min_password=MIN_PASSWORD,
                           active_tokens=count_active(current_user)), status


@bp.get("/")
def index():
    return _page()


@bp.post("/password")
def password():
    """Change your own password: the current one proves it is you; every other session of yours ends, and every
    API token unless you untick the box."""
    form = PasswordForm()
    if not form.validate():
        for errors in form.errors.values():
            for error in errors:
                flash(error, "error")
        return _page(400)
    user = current_user._get_current_object()
    address, name = address_key(request.remote_addr), user_key(user.username)
    limiter = current_app.extensions["login_limiter"]
    # The current password is the sign-in's secret: guesses here count against the same limit.
    wait = limiter.acquire(address, name)
    if wait:
        flash(f"Too many wrong passwords. Try again in {math.ceil(wait)} seconds.", "error")
        response = current_app.make_response(_page(429))
        response.headers["Retry-After"] = str(math.ceil(wait))
        return response
    try:
        revoked = change_password(user, form.current_password.data, form.new_password.data,
                                  end_tokens=form.end_tokens.data)
    except AccountError as exc:
        flash(str(exc), "error")
        return _page(400)
    limiter.succeeded(address, name)
    renew_session(user)
    flash("Your password is changed. You stay signed in here; every other browser signed in as you is signed out"
          + _tokens_note(revoked, kept=not form.end_tokens.data), "success")
    return redirect(url_for("account.index"))


def _tokens_note(revoked: int, *, kept: bool) -> str:
    if kept:
        return ". Your API tokens keep working."
    if revoked:
        return f", and your {revoked} API token{' is' if revoked == 1 else 's are'} revoked."
    return "."


@bp.post("/sessions")
def end_other_sessions():
    """Sign out everywhere else: the session version goes up and every API token is revoked; only this browser
    is signed in again."""
    user = current_user._get_current_object()
    sign_out_everywhere(user)
    renew_session(user)
    flash("Every other browser signed in as you is signed out, and every API token of yours is revoked. "
          "You stay signed in here.", "success")
    return redirect(url_for("account.index"))
