"""The human-score summary page, and the study chooser every results page falls back to."""
from __future__ import annotations

from flask import render_template, request, url_for

from app.services.results import VIEW_LABELS, analyse
from app.services.studies.lookup import study_rows
from app.web.results.blueprint import bp
from app.web.results.figures import human_charts, pivot
from app.web.results.params import ChooseStudy, stale_arg, study_arg, view_arg
from app.web.security import staff_required


@bp.errorhandler(ChooseStudy)
def choose_study(exc: ChooseStudy):
    rows = study_rows()
    return render_template("results/choose_study.html", rows=rows, links={r.study.id: _same_page(r.study.id)
                                                                          for r in rows})


def _same_page(study_id: int) -> str:
    """The page (or download) asked for, with its path's parts and query, in the chosen study; after a form
    post (nothing to repeat by a link), the study's summary."""
    if request.method != "GET" or not (request.endpoint or "").startswith("results."):
        return url_for("results.human", study=study_id)
    return url_for(request.endpoint, **{**request.args.to_dict(flat=False), **(request.view_args or {}),
                                        "study": study_id})


@bp.get("")
@staff_required
def human():
    study, view, stale = study_arg(), view_arg(), stale_arg()
    data = analyse(study.id, view, parts=("human",), include_stale=stale)
    return render_template(
        "results/human.html", study=study, data=data, view=view, view_labels=VIEW_LABELS, stale=stale,
        charts=human_charts(data), by_task=pivot(data["breakdowns"]["task"]),
        by_annotator=pivot(data["breakdowns"]["annotator"]),
    )
