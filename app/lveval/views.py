"""The LV-Eval page: one dataset (or the overall mean) at a time."""
from __future__ import annotations

from flask import abort, render_template, request

from app.metrics import PROFILES, QUIRKS
from app.results.params import profile_arg
from app.security import staff_required
from app.services.lveval.page import lveval_page
from app.lveval.blueprint import bp


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
