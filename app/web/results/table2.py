"""L-Eval's Table 2, live from the study's systems, their metric aggregates and judge runs."""
from __future__ import annotations

from flask import abort, render_template, request

from app.core.judge.profiles import PROFILES as JUDGE_PROFILES
from app.core.metrics.profiles import PROFILES
from app.services.results.assemble import study_systems
from app.services.results.table2 import table2
from app.web.results.blueprint import bp
from app.web.results.params import profile_arg, study_arg
from app.web.security import staff_required


@bp.get("/table2")
@staff_required
def table2_page():
    study, profile = study_arg(), profile_arg()
    judge = request.args.get("judge", "leval")
    if judge not in JUDGE_PROFILES:
        abort(400, description=f"judge must be one of {', '.join(JUDGE_PROFILES)}")
    data = table2(study_systems(study.id), profile, judge)
    return render_template("results/table2.html", study=study, data=data, profile=profile, judge=judge,
                           profiles=PROFILES, judge_profiles=JUDGE_PROFILES)
