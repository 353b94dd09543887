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
from flask_login import current_user
from flask_wtf import FlaskForm
from wtforms import BooleanField, PasswordField, StringField, SubmitField
from wtforms.validators import DataRequired, Length

from app.services.accounts import (
    authenticate,
    end_sessions,
    prepare_sign_in,
    record_sign_in,
)
from app.services.annotation.choices import study_to_resume
from app.services.login_limits import address_key, user_key
from app.web.sessions import end_session, lifetime_text, start_session

bp = Blueprint("auth", __name__)


class LoginForm(FlaskForm):
    username = StringField("Username", validators=[DataRequired(), Length(max=80)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200)])
    keep = BooleanField("Keep me signed in")
    submit = SubmitField("Sign in")


def _safe_next(target: str | None) -> str:
    """Follow ?next= only to a path on this site."""
    if not target:
        return url_for("home.index")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return url_for("home.index")
    return target


def _login_page(form: LoginForm) -> str:
    return render_template("auth/login.html", form=form, keep_for=lifetime_text())


def _landing(user, requested: str | None) -> str:
    """Where a sign-in goes: the page asked for; else, for an annotator with one study to resume, its work."""
    target = _safe_next(requested)
    if target == url_for("home.index") and user.role == "annotator":
        study = study_to_resume(user)
        if study is not None:
            return url_for("annotate.study_home", study_id=study.id)
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
            response = current_app.make_response((_login_page(form), 429))
            response.headers["Retry-After"] = str(math.ceil(wait))
            return response
        user = authenticate(username, form.password.data)
        if user is None:
            flash("Wrong username or password.", "error")
            return _login_page(form), 401
        limiter.succeeded(address, name)
        if not user.active:
            flash("This account is deactivated. Ask an admin to reactivate it.", "error")
            return _login_page(form), 403
        start_session(user, keep=form.keep.data)
        record_sign_in(user)
        return redirect(_landing(user, request.args.get("next")))
    prepare_sign_in()
    return _login_page(form)


@bp.post("/logout")
def logout():
    """Sign out: every session of this account ends, including copies of this one's cookie."""
    if current_user.is_authenticated:
        end_sessions(current_user._get_current_object())
    end_session()
    flash("You are signed out.", "info")
    return redirect(url_for("auth.login"))
