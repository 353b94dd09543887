"""Sign-in and sign-out."""
from __future__ import annotations

import math
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user, login_user, logout_user
from flask_wtf import FlaskForm
from wtforms import PasswordField, StringField, SubmitField
from wtforms.validators import DataRequired, Length

from app.services.accounts import (
    authenticate,
    end_sessions,
    prepare_sign_in,
    record_sign_in,
)
from app.services.login_limits import address_key, user_key

bp = Blueprint("auth", __name__)


class LoginForm(FlaskForm):
    username = StringField("Username", validators=[DataRequired(), Length(max=80)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200)])
    submit = SubmitField("Sign in")


def _safe_next(target: str | None) -> str:
    """Follow ?next= only to a path on this site."""
    if not target:
        return url_for("home.index")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return url_for("home.index")
    return target


@bp.route("/login", methods=["GET", "POST"])
def login():
    if current_user.is_authenticated:
        return redirect(url_for("home.index"))
    form = LoginForm()
    if form.validate_on_submit():
        username = form.username.data.strip()
        address, name = address_key(request.remote_addr), user_key(username)
        limiter = current_app.extensions["login_limiter"]
        # The attempt is counted before the password is checked: parallel guesses cannot exceed the limit.
        wait = limiter.acquire(address, name)
        if wait:
            flash(f"Too many failed sign-ins. Try again in {math.ceil(wait)} seconds.", "error")
            response = current_app.make_response((render_template("auth/login.html", form=form), 429))
            response.headers["Retry-After"] = str(math.ceil(wait))
            return response
        user = authenticate(username, form.password.data)
        if user is None:
            flash("Wrong username or password.", "error")
            return render_template("auth/login.html", form=form), 401
        limiter.succeeded(address, name)
        if not user.active:
            flash("This account is deactivated. Ask an admin to reactivate it.", "error")
            return render_template("auth/login.html", form=form), 403
        login_user(user)
        record_sign_in(user)
        return redirect(_safe_next(request.args.get("next")))
    prepare_sign_in()
    return render_template("auth/login.html", form=form)


@bp.post("/logout")
def logout():
    """Sign out: every session of this account ends, including copies of this one's cookie."""
    if current_user.is_authenticated:
        end_sessions(current_user._get_current_object())
    logout_user()
    flash("You are signed out.", "info")
    return redirect(url_for("auth.login"))
