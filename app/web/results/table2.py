"""L-Eval's Table 2, live from the study's systems, their metric aggregates and judge runs."""
from __future__ import annotations

from flask import abort, render_template, request

from app.core.judge.profiles import PROFILES as JUDGE_PROFILES
from app.core.metrics.profiles import PROFILES
from app.services.results.assemble import study_systems
from app.services.results.table2 import default_judge_profile, empty_reason, table2
from app.web.results.blueprint import bp
from app.web.results.params import profile_arg, study_arg
from app.web.security import staff_required


@bp.get("/table2")
@staff_required
def table2_page():
    study, profile = study_arg(), profile_arg()
    systems = study_systems(study.id)
    judge = request.args.get("judge") or default_judge_profile(systems)
    if judge not in JUDGE_PROFILES:
        abort(400, description=f"judge must be one of {', '.join(JUDGE_PROFILES)}")
    data = table2(systems, profile, judge)
    empty = empty_reason(systems) if not data["tasks"] or not data["rows"] else None
    return render_template("results/table2.html", study=study, data=data, profile=profile, judge=judge, empty=empty,
                           profiles=PROFILES, judge_profiles=JUDGE_PROFILES)
