"""LongBench's plugin (app.core.benchmarks.spec.Plugin): where its questions live, how its files are imported and scored,
and what the leaderboard's LongBench tab shows."""
from __future__ import annotations

from app.core.benchmarks.spec import OpencompassReader, Plugin
from app.core.metrics.longbench.benchmark import BENCHMARK
from app.models.longbench import LONGBENCH
from app.services.longbench.importer import import_payloads, model_of, payload_name
from app.services.longbench.opencompass import match_longbench, preview_file, store_file
from app.services.longbench.scoring import (AVERAGE_METRIC, CELL_METRIC, longbench_prediction_count,
                                            score_longbench_system)
from app.services.longbench.tab import BUCKETS, SCALE, V2_COLUMNS, longbench_json, longbench_tab, system_tables
from app.services.longbench.uploads import check_longbench_models, import_longbench_previews, preview_longbench_file


def _score(system_id: int, *, profiles, job_id: int | None = None, check_cancelled=None) -> tuple[dict, str]:
    result = score_longbench_system(system_id, profiles=profiles, job_id=job_id, check_cancelled=check_cancelled)
    rows = result["longbench_rows"]
    return result, (f"LongBench: {rows} rows in {result['longbench_cells']} datasets" if rows else "")


def _tab(profile: str) -> tuple[str, dict]:
    return "leaderboard/longbench.html", {"tab": longbench_tab(profile),
                                          "quirks": [q for q in BENCHMARK.quirks if q["changed"]]}


def _section(system, profile: str) -> tuple[str, dict] | None:
    table = next((t for t in system_tables(profile) if t.system_id == system.id), None)
    if table is None:
        return None
    return "leaderboard/_system_longbench.html", {"longbench": table, "longbench_scale": SCALE,
                                                  "longbench_buckets": BUCKETS, "longbench_v2_columns": V2_COLUMNS}


PLUGIN = Plugin(
    benchmark=BENCHMARK, collection=LONGBENCH, table_metrics=(CELL_METRIC, AVERAGE_METRIC),
    prediction_count=longbench_prediction_count, score_system=_score,
    import_model=import_payloads, model_of=model_of, payload_name=payload_name,
    preview_file=preview_longbench_file, check_models=check_longbench_models,
    import_previews=import_longbench_previews, leaderboard_tab=_tab, leaderboard_json=longbench_json,
    opencompass=OpencompassReader(match=match_longbench, preview=preview_file, store=store_file),
    system_section=_section,
)
