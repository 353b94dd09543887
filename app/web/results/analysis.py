"""Metric-versus-human correlation, annotator agreement and the disagreement view."""
from __future__ import annotations

from flask import abort, render_template, request

from app.core.metrics.profiles import PROFILES
from app.services.results import (
    PROFILE_LABELS,
    VIEW_LABELS,
    analyse,
    columns_for,
    rater_agreement,
    sampling_note,
)
from app.services.results.browse import browse_disagreements
from app.services.results.metric_values import LENGTH_KEY
from app.services.results.question_view import question_view
from app.web.results.blueprint import bp
from app.web.results.figures import alpha_chart, correlation_charts
from app.web.results.params import profile_arg, study_arg, view_arg
from app.web.security import staff_required


def _common(study, view: str, profile: str) -> dict:
    return {"study": study, "view": view, "profile": profile, "view_labels": VIEW_LABELS, "profiles": PROFILES,
            "profile_labels": PROFILE_LABELS, "sampling_note": sampling_note(study)}


@bp.get("/correlation")
@staff_required
def correlation():
    study, view, profile = study_arg(), view_arg(), profile_arg()
    from app.core.stats.correlation import (
        MIN_SYSTEMS_TO_RANK,  # numpy loads with the first analysis, not at start
    )

    data = analyse(study.id, view, profile, parts=("correlation",))
    return render_template("results/correlation.html", data=data, charts=correlation_charts(data),
                           min_systems_to_rank=MIN_SYSTEMS_TO_RANK, **_common(study, view, profile))


@bp.get("/agreement")
@staff_required
def agreement():
    study, view = study_arg(), view_arg()
    from app.core.stats.rater_agreement import (  # numpy loads with the first analysis, not at start
        MIN_CEILING_ANNOTATORS,
        MIN_CEILING_ITEMS,
    )

    data = analyse(study.id, view, parts=("agreement",))
    ceiling_minimum = {"annotators": MIN_CEILING_ANNOTATORS, "answers": MIN_CEILING_ITEMS}
    return render_template("results/agreement.html", data=data, chart=alpha_chart(data["agreement"]["alpha"]),
                           raters=rater_agreement(study.id, view), ceiling_minimum=ceiling_minimum,
                           **_common(study, view, "official"))


@bp.get("/disagreements", endpoint="disagreements")
@staff_required
def disagreements_page():
    study, view, profile = study_arg(), view_arg(), profile_arg()
    # Judges give one verdict per pair, not a value per answer, so only metrics and length rank answers here.
    columns = [c for c in columns_for(study.id, profile) if c.source in ("metric", "length") and c.values]
    wanted = request.args.get("metric") or next((c.key for c in columns if c.key == "rougeL"), None) or (
        columns[0].key if columns else LENGTH_KEY)
    column = next((c for c in columns if c.key == wanted), None)
    if column is None and columns:
        abort(400, description="unknown metric")
    search, task = request.args.get("q", "")[:200], request.args.get("task", "")
    listing = browse_disagreements(study.id, column.key, view, profile, task=task, search=search,
                                   page=request.args.get("page", 1, type=int) or 1) if column else None
    return render_template("results/disagreements.html", rows=listing.rows if listing else [], listing=listing,
                           columns=columns, column=column, search=search, task=task, **_common(study, view, profile))


@bp.get("/disagreements/questions/<int:question_id>", endpoint="disagreement_question")
@staff_required
def disagreement_question(question_id: int):
    """Read-only: one question's answers, each annotator's score of each and their metric values."""
    study, view, profile = study_arg(), view_arg(), profile_arg()
    detail = question_view(study.id, question_id, profile)
    if detail is None:
        abort(404, description="this study does not show that question")
    return render_template("results/question.html", q=detail, metric=request.args.get("metric", ""),
                           **_common(study, view, profile))
