"""LV-Eval: level curves, its result table, the context ceiling, needle heatmaps and ablations (staff only)."""
from __future__ import annotations

from flask import Blueprint, abort, render_template, request

from app.core.metrics import PROFILES, QUIRKS
from app.services.lveval.page import lveval_page
from app.web.results.params import profile_arg
from app.web.security import staff_required

bp = Blueprint("lveval", __name__)


@bp.get("")
@staff_required
def index():
    profile = profile_arg()
    dataset = request.args.get("dataset", "overall")
    page = lveval_page(profile, dataset)
    if page is None:
        abort(404)
    quirks = [q for q in QUIRKS if q["id"].startswith("lveval")]
    return render_template("lveval/index.html", page=page, profile=profile, profiles=PROFILES, quirks=quirks)
