"""Deleting a study, a system, an upload or the demo: a page that says what goes, then a POST that does it."""
from __future__ import annotations

from flask import abort, flash, redirect, render_template, request, url_for

from app.extensions import db
from app.models import PredictionFile, Study, System
from app.security import staff_required
from app.services.studies import deletion
from app.studies.blueprint import bp


def _confirm_delete(plan: deletion.DeletionPlan, carry_out, done_url: str):
    """GET: say what goes. POST: delete (with force when human scores go; they are exported first)."""
    if request.method == "GET":
        return render_template("studies/delete.html", plan=plan)
    try:
        saved = carry_out(request.form.get("force") == "yes")
    except deletion.DeletionRefused as exc:
        flash(str(exc), "error")
        return render_template("studies/delete.html", plan=plan), 409
    message = f"Deleted {plan.what}."
    if saved is not None:
        message += f" Its {plan.scores} human score(s) were saved to {saved.name} in the instance's deleted/ folder."
    flash(message, "success")
    return redirect(done_url)


@bp.route("/<int:study_id>/delete", methods=["GET", "POST"])
@staff_required
def delete(study_id: int):
    study = db.session.get(Study, study_id) or abort(404)
    return _confirm_delete(deletion.plan_study(study), lambda force: deletion.delete_study(study, force=force),
                           url_for("studies.index"))


@bp.route("/demo/delete", methods=["GET", "POST"])
@staff_required
def delete_demo():
    return _confirm_delete(deletion.plan_demo(), lambda force: deletion.delete_demo(force=force),
                           url_for("studies.index"))


@bp.route("/systems/<int:system_id>/delete", methods=["GET", "POST"])
@staff_required
def delete_system(system_id: int):
    system = db.session.get(System, system_id) or abort(404)
    return _confirm_delete(deletion.plan_system(system), lambda force: deletion.delete_system(system, force=force),
                           url_for("predictions.index"))


@bp.route("/uploads/<int:file_id>/delete", methods=["GET", "POST"])
@staff_required
def delete_upload(file_id: int):
    upload = db.session.get(PredictionFile, file_id) or abort(404)
    return _confirm_delete(deletion.plan_upload(upload), lambda force: deletion.delete_upload(upload, force=force),
                           url_for("predictions.index"))
