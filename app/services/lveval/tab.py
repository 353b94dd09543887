"""The leaderboard's LV-Eval tab and the LV-Eval part of its JSON export."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import select

from app.core.metrics.files import LVEVAL_DATASETS, LVEVAL_LEVELS
from app.core.metrics.lveval.table import result_csv_text, result_json, result_json_text
from app.extensions import db
from app.models import MetricAggregate, System
from app.services.lveval.charts import curves_svg
from app.services.lveval.report import SystemView, build_view
from app.services.lveval.scoring import (
    AVERAGE_METRIC,
    CELL_METRIC,
    OVERALL_TASK,
    level_task,
)


@dataclass
class LvevalTab:
    systems: list[SystemView]
    levels: tuple[str, ...]
    curves: str
    datasets_total: int


def lveval_tab(profile: str) -> LvevalTab:
    view = build_view(profile)
    systems = sorted(view.systems, key=lambda s: (s.average is None, -(s.average or 0.0), s.name.lower()))
    return LvevalTab(systems=systems, levels=LVEVAL_LEVELS,
                     curves=curves_svg(view, identifier="leaderboard-lveval-curves") if systems else "",
                     datasets_total=view.datasets_total)


def lveval_json(profile: str) -> list[dict]:
    """Per system: result.json's numbers, the paper's averages per dataset and level, and the overall average."""
    # The name comes with each value (one read, one view of the data): a value never outlives its system's row.
    stmt = (select(MetricAggregate.system_id, System.name, MetricAggregate.task, MetricAggregate.metric,
                   MetricAggregate.value)
            .join(System, System.id == MetricAggregate.system_id)
            .where(MetricAggregate.profile == profile, MetricAggregate.metric.in_((CELL_METRIC, AVERAGE_METRIC))))
    cells: dict[int, dict[tuple[str, str], float]] = defaultdict(dict)
    averages: dict[int, dict[str, float]] = defaultdict(dict)
    names: dict[int, str] = {}
    for system_id, name, task, metric, value in db.session.execute(stmt):
        names[system_id] = name
        if metric == CELL_METRIC:
            dataset, _, level = task.rpartition("_")
            cells[system_id][(dataset, level)] = value
        else:
            averages[system_id][task] = value
    result = []
    for system_id in sorted(cells, key=lambda sid: names[sid].lower()):
        extra = averages[system_id]
        result.append({
            "system": names[system_id], "profile": profile, "scale": "0-100, rounded as LV-Eval's evaluation.py",
            "result_json": result_json(cells[system_id]),
            # The two files exactly as evaluation.py writes them (JSON objects lose their key order here).
            "result_json_text": result_json_text(cells[system_id]), "result_csv": result_csv_text(cells[system_id]),
            "per_level": {level: extra[level_task(level)] for level in LVEVAL_LEVELS if level_task(level) in extra},
            "per_dataset": {task: value for task, value in extra.items() if not task.startswith("lveval@")},
            "overall": extra.get(OVERALL_TASK),
            # per_level and overall are over the cells it has: LV-Eval's own only when no dataset is missing.
            "missing_datasets": sorted(set(LVEVAL_DATASETS) - {dataset for dataset, _ in cells[system_id]}),
            "complete": len(cells[system_id]) == len(LVEVAL_DATASETS) * len(LVEVAL_LEVELS),
        })
    return result
