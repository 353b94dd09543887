"""Downloads (scores, L-Eval layout, results JSON) and the length-instruction tools."""
from __future__ import annotations

from flask import abort, flash, redirect, render_template, request, url_for

from app.services.exports import (
    ROUND_CHOICES,
    annotators_with_scores,
    jsonl_text,
    left_out_note,
    leval_filename,
    leval_left_out,
    results_text,
    stored_export,
)
from app.services.results import (
    full_results,
    prompt_rows,
    set_length_instruction_flags,
    systems_with_flags,
)
from app.web.downloads import attachment
from app.web.results.blueprint import bp
from app.web.results.params import study_arg
from app.web.routing import id_list
from app.web.security import staff_required


@bp.get("/exports")
@staff_required
def exports():
    study = study_arg()
    names = annotators_with_scores(study.id)
    left_out = {name: left_out_note(leval_left_out(study.id, name)) for name in names}
    return render_template("results/exports.html", study=study, annotators=names, left_out=left_out)


@bp.get("/export/scores.<fmt>")
@staff_required
def download_scores(fmt: str):
    study = study_arg()
    rounds = request.args.get("rounds", "all")
    if fmt not in ("jsonl", "csv") or rounds not in ROUND_CHOICES:
        abort(404)
    return attachment(stored_export(fmt, study.id, rounds=rounds), f"{study.name}-scores-{rounds}.{fmt}", fmt)


@bp.get("/export/leval/<annotator>")
@staff_required
def download_leval(annotator: str):
    study = study_arg()
    try:
        pieces = stored_export("leval", study.id, annotator=annotator)
    except LookupError:
        abort(404)
    return attachment(pieces, leval_filename(annotator), "jsonl")


@bp.get("/export/results.json")
@staff_required
def download_results():
    study = study_arg()
    return attachment(results_text(full_results(study.id)), f"{study.name}-results.json", "json")


@bp.get("/length-instruction")
@staff_required
def length_instruction():
    study = study_arg()
    return render_template("results/length_instruction.html", study=study, systems=systems_with_flags(study.id))


@bp.post("/length-instruction")
@staff_required
def save_length_instruction():
    study = study_arg()
    flagged = set(id_list(request.form.getlist("length_instruction")))
    changed = set_length_instruction_flags(study.id, flagged)
    if changed:
        flash(f"Updated the length-instruction flag of {', '.join(changed)}.", "success")
    else:
        flash("No flag changed.", "info")
    return redirect(url_for("results.length_instruction", study=study.id))


@bp.get("/length-instruction/prompts.jsonl")
@staff_required
def length_instruction_prompts():
    study = study_arg()
    return attachment(jsonl_text(prompt_rows(study.id)), f"{study.name}.length_instruction.prompts.jsonl", "jsonl")
