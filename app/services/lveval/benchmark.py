"""LV-Eval's plugin (app.core.benchmarks.spec.Plugin): where its questions live, how its files are imported and scored,
and what the leaderboard's LV-Eval tab shows."""
from __future__ import annotations

from pathlib import PurePath

from app.core.benchmarks.spec import OpencompassReader, Plugin
from app.core.metrics.lveval.benchmark import BENCHMARK
from app.models.corpus import LVEVAL
from app.services.lveval.importer import import_payloads
from app.services.lveval.opencompass import match_lveval, preview_file, store_file
from app.services.lveval.scoring import AVERAGE_METRIC, CELL_METRIC, lveval_prediction_count, score_lveval_system
from app.services.lveval.tab import lveval_json, lveval_tab
from app.services.lveval.uploads import check_lveval_models, import_lveval_previews, preview_lveval_file


def _score(system_id: int, *, profiles, job_id: int | None = None, check_cancelled=None) -> tuple[dict, str]:
    result = score_lveval_system(system_id, profiles=profiles, job_id=job_id, check_cancelled=check_cancelled)
    rows = result["lveval_rows"]
    return result, (f"LV-Eval: {rows} rows, {result['lveval_cells']} cells" if rows else "")


def _tab(profile: str) -> tuple[str, dict]:
    tab = lveval_tab(profile)
    return "leaderboard/lveval.html", {"systems": tab.systems, "levels": tab.levels, "curves": tab.curves,
                                       "datasets_total": tab.datasets_total}


def _section(system, profile: str) -> tuple[str, dict] | None:
    entry = next((e for e in lveval_json(profile) if e["system"] == system.name), None)
    return ("leaderboard/_system_lveval.html", {"lveval": entry}) if entry is not None else None


def _model_of(path: PurePath) -> str:
    return path.parent.name  # `<model>/<dataset>_<level>.jsonl`


PLUGIN = Plugin(
    benchmark=BENCHMARK, collection=LVEVAL, table_metrics=(CELL_METRIC, AVERAGE_METRIC),
    prediction_count=lveval_prediction_count, score_system=_score,
    import_model=import_payloads, model_of=_model_of,
    preview_file=preview_lveval_file, check_models=check_lveval_models, import_previews=import_lveval_previews,
    leaderboard_tab=_tab, leaderboard_json=lveval_json,
    opencompass=OpencompassReader(match=match_lveval, preview=preview_file, store=store_file),
    system_section=_section,
)
