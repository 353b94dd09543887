"""Studies (staff only): create, configure, open and close evaluation campaigns; pin answers; delete data."""
from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from app.core.numbers import parse_whole_number
from app.extensions import db
from app.models import PredictionFile, Study, System, User
from app.models.corpus import REFERENCE_KINDS, REFERENCE_LABELS
from app.models.studies import REFERENCE_POLICIES
from app.services import deletion
from app.services.annotation.oversight import study_overview
from app.services.annotation.rounds import (
    BeginAgainError,
    begin_again,
    find_open_round,
    rounds_of,
)
from app.services.studies import allocation, setup
from app.services.studies.answers import pin_latest
from app.services.studies.lookup import study_rows
from app.services.studies.setup import StudyError
from app.web.routing import (
    id_list,  # checkbox values as ids: the one rule for ids from forms
)
from app.web.security import staff_required

bp = Blueprint("studies", __name__)


def optional_overlap(text: str) -> int | None:
    """Blank means every annotator scores every answer; otherwise a whole number of at least 1."""
    text = (text or "").strip()
    if not text:
        return None
    overlap = parse_whole_number(text, maximum=9999)
    if not overlap:
        raise StudyError("Overlap must be blank (everyone) or a whole number of at least 1.")
    return overlap


def optional_number(form, field: str, label: str, kind=int):
    """A blank field is None; otherwise a number of `kind`, or an error naming the field (the service checks its range)."""
    text = (form.get(field) or "").strip()
    if not text:
        return None
    try:
        value = kind(text)
    except ValueError:
        raise StudyError(f"{label}: '{text[:20]}' is not a {'whole number' if kind is int else 'number'}.") from None
    if kind is float and value != value:  # NaN
        raise StudyError(f"{label}: '{text[:20]}' is not a number.")
    return value


def allocation_fields(form) -> dict:
    """The allocation part of the new-study form: fixed (overlap k) or adaptive (a budget and its options)."""
    allocation = form.get("allocation") or "fixed"
    overlap = optional_overlap(form.get("overlap", ""))  # given with adaptive, the service refuses it by name
    if allocation != "adaptive":
        return {"allocation": allocation, "overlap": overlap}
    return {"allocation": "adaptive", "overlap": overlap,
            "budget_documents": optional_number(form, "budget_documents", "Budget of documents read"),
            "budget_answers": optional_number(form, "budget_answers", "Budget of answers scored"),
            "budget_hours": optional_number(form, "budget_hours", "Budget of annotator-hours", float),
            "min_per_answer": optional_number(form, "min_per_answer", "Minimum annotators per answer"),
            "tie_margin": optional_number(form, "tie_margin", "Tie margin", float),
            "calibration_documents": optional_number(form, "calibration_documents", "Calibration documents"),
            "start_window_hours": optional_number(form, "start_window_hours", "Start window (hours)", float),
            "max_documents_per_annotator": optional_number(form, "max_documents_per_annotator",
                                                           "Most documents per annotator")}


EVERYONE = "everyone"  # the `scorers` choice that opens a study to every account; anything else: the checked ones


def chosen_annotators(form) -> list[int] | None:
    """Who scores, as the form chose it: None for every account, else the checked accounts (none is refused)."""
    checked = id_list(form.getlist("annotator"))
    if form.get("scorers") != EVERYONE:
        return checked
    if checked:
        raise StudyError("Choose either every account or the checked annotators, not both: uncheck them, "
                         "or choose 'only the checked annotators'. Nothing was changed.")
    return None


def _study(study_id: int) -> Study:
    return db.session.get(Study, study_id) or abort(404)


@bp.get("")
@staff_required
def index():
    return render_template("studies/index.html", rows=study_rows(), question_sets=setup.question_sets())


@bp.route("/new", methods=["GET", "POST"])
@staff_required
def new():
    users = setup.active_users()
    if request.method == "POST":
        try:
            questions = setup.questions_for(request.form.get("questions", "human_eval"))
            spec = setup.StudySpec(
                name=request.form.get("name", ""), description=request.form.get("description", ""),
                question_ids=questions,
                # The form says it listed the systems; a post without the list takes every answering system.
                system_ids=(setup.chosen_systems(id_list(request.form.getlist("system")), questions)
                            if request.form.get("systems_listed") else None),
                reference_kinds=[k for k in request.form.getlist("reference") if k in REFERENCE_KINDS],
                reference_policy=request.form.get("policy", "hide"),
                annotator_ids=chosen_annotators(request.form),
                # Unchecked on the form: apart; a post without the form's field keeps the default (once).
                merge_identical=(request.form.get("identical") == "once" if request.form.get("identical_listed")
                                 else True),
                **allocation_fields(request.form),
            )
            study = setup.create_study(spec, by_user_id=current_user.id)
        except setup.StudyError as exc:
            db.session.rollback()
            flash(str(exc), "error")
            return _new_form(users, request.form), 400
        flash(f"Study '{study.name}' created as a draft: check its systems and references, then open it.", "success")
        return redirect(url_for("studies.show", study_id=study.id))
    return _new_form(users, {})


def _new_form(users, form):
    return render_template("studies/new.html", users=users, form=form, kinds=REFERENCE_KINDS, labels=REFERENCE_LABELS,
                           policies=REFERENCE_POLICIES, question_sets=setup.question_sets(),
                           systems=setup.system_choices(),
                           plan=setup.reading_plan(form.get("questions", "human_eval") if form else "human_eval"))


@bp.get("/<int:study_id>")
@staff_required
def show(study_id: int):
    return render_template("studies/show.html", o=study_overview(_study(study_id)), policies=REFERENCE_POLICIES)


def _apply(study: Study, action, success: str, anchor: str):
    try:
        action()
        db.session.commit()
        flash(success, "success")
    except setup.StudyError as exc:
        db.session.rollback()
        flash(str(exc), "error")
    return redirect(url_for("studies.show", study_id=study.id, _anchor=anchor))


@bp.post("/<int:study_id>/status")
@staff_required
def status(study_id: int):
    study = _study(study_id)
    wanted = request.form.get("status", "")
    return _apply(study, lambda: setup.set_status(study, wanted), f"The study is now {wanted}.", "status")


@bp.post("/<int:study_id>/systems")
@staff_required
def systems(study_id: int):
    study = _study(study_id)
    chosen = id_list(request.form.getlist("system"))
    return _apply(study, lambda: setup.set_systems(study, chosen),
                  "Systems saved. Scores of systems left out are kept, not counted.", "systems")


@bp.post("/<int:study_id>/references")
@staff_required
def references(study_id: int):
    study = _study(study_id)
    kinds = [k for k in request.form.getlist("reference") if k in REFERENCE_KINDS]
    policy = request.form.get("policy", "hide")
    return _apply(study, lambda: setup.set_references(study, kinds, policy), "References saved and checked.",
                  "references")


@bp.post("/<int:study_id>/identical")
@staff_required
def identical(study_id: int):
    study = _study(study_id)
    once = request.form.get("how") == "once"
    return _apply(study, lambda: setup.set_merge_identical(study, once),
                  f"Identical answers are now shown {'once' if once else 'apart'}.", "identical")


@bp.post("/<int:study_id>/annotators")
@staff_required
def annotators(study_id: int):
    study = _study(study_id)
    try:
        overlap = optional_overlap(request.form.get("overlap", ""))
        chosen = chosen_annotators(request.form)
    except setup.StudyError as exc:
        flash(str(exc), "error")
        return redirect(url_for("studies.show", study_id=study.id, _anchor="annotators"))
    return _apply(study, lambda: setup.set_annotators(study, chosen, overlap),
                  "Annotators and overlap saved; answers were shared out again (work already done stays).",
                  "annotators")


@bp.post("/<int:study_id>/annotators/<int:user_id>/reliability")
@staff_required
def reliability(study_id: int, user_id: int):
    """Let a flagged annotator of an adaptive study read on (their scores count again), or take that back."""
    study = _study(study_id)
    if not study.adaptive or user_id not in allocation.readers_of(study, allocation.given_documents(study.id)):
        abort(404)
    include = request.form.get("include") == "1"
    return _apply(study, lambda: allocation.include_again(study, user_id, include),
                  "The annotator reads on; their scores count again." if include
                  else "The annotator is left out again: no more documents, their scores not counted.", "ranking-status")


@bp.route("/<int:study_id>/pin/<int:system_id>", methods=["GET", "POST"])
@staff_required
def pin(study_id: int, system_id: int):
    study = _study(study_id)
    system = db.session.get(System, system_id) or abort(404)
    if request.method == "POST":
        report = pin_latest(study.id, system.id)
        db.session.commit()
        flash(report.describe(), "success")
        return redirect(url_for("studies.show", study_id=study.id, _anchor="systems"))
    return render_template("studies/pin.html", study=study, system=system,
                           report=pin_latest(study.id, system.id, dry_run=True))


@bp.route("/<int:study_id>/annotators/<int:user_id>/begin-again", methods=["GET", "POST"])
@staff_required
def begin_again_view(study_id: int, user_id: int):
    """Ask for confirmation, then archive the annotator's round in this study and open a fresh one."""
    study = _study(study_id)
    annotator = db.session.get(User, user_id) or abort(404)
    if request.method == "POST":
        try:
            result = begin_again(study.id, annotator.id, current_user.id)
        except BeginAgainError as exc:
            flash(str(exc), "error")
            return redirect(url_for("studies.show", study_id=study.id, _anchor="progress"))
        scores = f"{result.archived_scores} score" + ("" if result.archived_scores == 1 else "s")
        flash(f"{annotator.username} begins again in round {result.new_number}. Round {result.archived_number} "
              f"is archived with {scores}.", "success")
        return redirect(url_for("studies.show", study_id=study.id, _anchor="progress"))
    current = find_open_round(study.id, annotator.id)
    summary = next((r for r in rounds_of(study.id, [annotator.id]).get(annotator.id, [])
                    if current and r.id == current.id), None)
    return render_template("annotate/begin_again.html", study=study, annotator=annotator, current=summary)


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
