"""Admin pages: user accounts."""
from __future__ import annotations

from flask import (
    Blueprint,
    abort,
    flash,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user

from app.extensions import db
from app.models import User
from app.models.users import ROLES
from app.services.accounts import (
    AccountError,
    create_user,
    generate_password,
    list_users,
    reset_password,
    set_active,
)
from app.web.security import roles_required

bp = Blueprint("admin", __name__)


def _users_page(status: int = 200, **form):
    return render_template("admin/users.html", users=list_users(), roles=ROLES, form=form), status


@bp.get("/")
@roles_required("admin")
def index():
    """The admin area opens on its one page, the accounts."""
    return redirect(url_for("admin.users"))


@bp.get("/users")
@roles_required("admin")
def users():
    return _users_page()


@bp.post("/users")
@roles_required("admin")
def create():
    username = request.form.get("username", "").strip()
    role = request.form.get("role", "annotator")
    typed = request.form.get("password", "")
    password = typed or generate_password()
    try:
        user = create_user(username, password, role)
    except AccountError as exc:
        flash(str(exc), "error")
        return _users_page(400, username=username, role=role)
    if typed:
        flash(f"Created {user.role} '{user.username}' with the password you typed.", "success")
        return redirect(url_for("admin.users"))
    return _password_once(user, password, created=True)


def _user_or_404(user_id: int) -> User:
    return db.session.get(User, user_id) or abort(404)


@bp.post("/users/<int:user_id>/active")
@roles_required("admin")
def set_user_active(user_id: int):
    user = _user_or_404(user_id)
    active = request.form.get("active") == "1"
    try:
        set_active(user, active, by=current_user)
    except AccountError as exc:
        flash(str(exc), "error")
    else:
        flash(f"'{user.username}' is {'active again' if active else 'deactivated: they cannot sign in'}.", "success")
    return redirect(url_for("admin.users"))


@bp.post("/users/<int:user_id>/password")
@roles_required("admin")
def reset_user_password(user_id: int):
    """A new one-time password for another account; your own you change on your account page."""
    user = _user_or_404(user_id)
    if user.id == current_user.id:
        # A reset would end this very session and show a password nobody asked for: you would be signed out.
        flash("Your own password is not reset here: change it on your account page, with your current one.", "error")
        return redirect(url_for("account.index"))
    password = reset_password(user)
    return _password_once(user, password, created=False)


def _password_once(user: User, password: str, *, created: bool):
    response = make_response(render_template("admin/password_once.html", user=user, password=password, created=created))
    response.headers["Cache-Control"] = "no-store"  # keep the password out of the browser's cache
    return response
