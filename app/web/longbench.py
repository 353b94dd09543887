"""LongBench: the rows behind each number of the leaderboard's LongBench tab (staff only)."""
from __future__ import annotations

from flask import Blueprint, abort, render_template, request

from app.core.metrics.longbench import VARIANT_LABELS
from app.core.metrics.profiles import PROFILES
from app.extensions import db
from app.models import System
from app.services.longbench.tab import rows_behind
from app.web.results.params import profile_arg
from app.web.security import staff_required

bp = Blueprint("longbench", __name__)

PROFILE_NOTES = {
    "official": "reproduces LongBench's metrics.py, eval.py and result.py, quirks included",
    "fixed": "corrects their quirks (listed on the LongBench tab)",
}


@bp.get("/rows/<int:system_id>")
@staff_required
def rows(system_id: int):
    profile = profile_arg()
    system = db.get_or_404(System, system_id)
    variant, dataset = request.args.get("variant", "v1"), request.args.get("dataset", "")
    part = request.args.get("part", "")[:20]
    result = rows_behind(system.id, variant, dataset, part, profile, page=request.args.get("page", 1, type=int) or 1)
    if result is None:
        abort(404)
    what = VARIANT_LABELS[variant] + ("" if variant == "v2" else f" {dataset}") + (f" · {part}" if part else "")
    return render_template("longbench/rows.html", system=system, variant=variant, dataset=dataset, part=part,
                           what=what, result=result, profile=profile, profiles=PROFILES, profile_notes=PROFILE_NOTES)
