"""The metric leaderboard: one row per system or per task, and the per-question drill-down (staff only)."""
from __future__ import annotations

from flask import (
    Blueprint,
    abort,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)

from app.core.benchmarks.registry import by_key
from app.core.metrics import METRIC_KEYS, PROFILES, QUIRKS
from app.core.text import lookalike_groups
from app.extensions import db
from app.models import System
from app.services.benchmarks import PLUGINS, plugin
from app.services.metrics import HUMAN_EVAL_BUCKET, OVERALL
from app.services.metrics.leaderboard import (
    LEADERBOARD_METRICS,
    METRIC_LABELS,
    PER_QUESTION_WORD_COUNTS,
    PRIMARY_ORDER,
    SUBSET_SORTS,
    leaderboard_columns,
    question_values,
    sort_rows,
    system_tasks,
    task_matrix,
)
from app.services.metrics.leaderboard import (
    leaderboard as leaderboard_rows,
)
from app.services.metrics.leaderboard_json import leaderboard_json
from app.services.system_keys import save_system_card, system_card
from app.web.results.params import profile_arg
from app.web.security import staff_required

bp = Blueprint("leaderboard", __name__)


PROFILE_NOTES = {
    "official": "reproduces each benchmark's reference scripts, quirks included",
    "fixed": "corrects the reference scripts' quirks",
}
SORTS = LEADERBOARD_METRICS + ("judge", "system") + SUBSET_SORTS
L_EVAL_METRICS = tuple(m for m in METRIC_KEYS if m != "lveval")  # LV-Eval has its own tab and page
# The other benchmarks' tabs (services.benchmarks), after L-Eval's views: (view, label).
BENCHMARK_TABS = tuple((p.key, p.label) for p in PLUGINS)


def _common(profile: str) -> dict:
    return {"profile": profile, "profiles": PROFILES, "profile_notes": PROFILE_NOTES, "labels": METRIC_LABELS,
            "all_tasks": OVERALL, "human_eval": HUMAN_EVAL_BUCKET, "benchmark_tabs": BENCHMARK_TABS}


@bp.get("")
@staff_required
def index():
    profile = profile_arg()
    other = plugin(request.args.get("view", ""))
    if other is not None:
        template, values = other.leaderboard_tab(profile)
        return render_template(template, view=other.key, **values, **_common(profile))
    if request.args.get("view") == "tasks":
        metric = request.args.get("metric", "primary")
        if metric != "primary" and metric not in L_EVAL_METRICS:
            metric = "primary"
        return render_template("leaderboard/tasks.html", matrix=task_matrix(profile, metric), metric=metric,
                               metric_choices=("primary",) + L_EVAL_METRICS, primary_order=PRIMARY_ORDER,
                               view="tasks", **_common(profile))
    sort = request.args.get("sort", "")
    rows = leaderboard_rows(profile, sort if sort in SORTS else "system")
    # With only the human-eval subset imported, its columns are the board: sort by them unless asked otherwise.
    only_subset = bool(rows) and not any(row.has_task_scores for row in rows) and any(row.subset for row in rows)
    if sort not in SORTS:
        sort = f"{HUMAN_EVAL_BUCKET}:f1" if only_subset else "exact_match"
        rows = sort_rows(rows, sort)
    columns = leaderboard_columns(rows)
    return render_template("leaderboard/index.html", rows=rows, sort=sort, only_subset=only_subset,
                           lookalikes=lookalike_groups([row.system for row in rows]),
                           show_subset=bool(columns["subset"]), columns=columns,
                           quirks=[q for q in QUIRKS if q["changed"]], view="systems", **_common(profile))


@bp.get("/json")
@staff_required
def as_json():
    """The leaderboard as JSON; every number is labelled with its profile. `benchmark` keeps one benchmark's table."""
    benchmark = request.args.get("benchmark") or None
    if benchmark is not None and by_key(benchmark) is None:
        abort(404)
    return jsonify(leaderboard_json(profile_arg(), benchmark))


@bp.get("/systems/<int:system_id>")
@staff_required
def system(system_id: int):
    profile = profile_arg()
    system = db.get_or_404(System, system_id)
    return render_template("leaderboard/system.html", system=system, tasks=system_tasks(system.id, profile),
                           metrics=L_EVAL_METRICS, card=system_card(system), form={}, errors={},
                           sections=_sections(system, profile), **_common(profile))


def _sections(system: System, profile: str) -> list[tuple[str, dict]]:
    """Every other benchmark's section of the system's page (template, values), for those it has numbers in."""
    return [section for p in PLUGINS if p.system_section and (section := p.system_section(system, profile))]


@bp.post("/systems/<int:system_id>/keys")
@staff_required
def save_keys(system_id: int):
    """Save the system's leaderboard keys and LV-Eval ablation tag; errors re-show the form with what was typed."""
    profile = profile_arg()
    system = db.get_or_404(System, system_id)
    errors = save_system_card(system, request.form)
    if errors:
        return render_template("leaderboard/system.html", system=system, tasks=system_tasks(system.id, profile),
                               metrics=L_EVAL_METRICS, card=system_card(system), form=request.form, errors=errors,
                               sections=_sections(system, profile), **_common(profile)), 400
    flash(f"Saved the leaderboard keys of {system.name}.", "success")
    return redirect(url_for("leaderboard.system", system_id=system.id, profile=profile))


@bp.get("/systems/<int:system_id>/questions")
@staff_required
def questions(system_id: int):
    profile = profile_arg()
    system = db.get_or_404(System, system_id)
    metric = request.args.get("metric", "")
    task = request.args.get("task", OVERALL)
    if metric not in METRIC_KEYS or not task:
        abort(404)
    sort = request.args.get("sort", "file")
    page = request.args.get("page", 1, type=int) or 1
    search = request.args.get("q", "")[:200]
    document = request.args.get("document", type=int)
    result = question_values(system.id, task, metric, profile, page=page, sort=sort, search=search,
                             document_id=document)
    return render_template("leaderboard/questions.html", system=system, task=task, metric=metric,
                           result=result, sort=sort, search=search, document=document,
                           word_counts=PER_QUESTION_WORD_COUNTS, **_common(profile))
