"""LV-Eval's result table: the file score, result.json, result.csv and the paper's averages.

Pure arithmetic over per-row scores in [0, 1]. The official cell is
``round(100 * total / n, 2)`` with ``total`` summed in file order, as
LV-Eval's evaluation.py computes it; averaging per-row percentages or
re-rounding a stored aggregate can differ in the last digit.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from app.core.metrics.files import LVEVAL_LEVELS, lveval_sort_key

Cell = tuple[str, str]  # (dataset, level)


def file_score(row_scores: Sequence[float]) -> float:
    """Return the number LV-Eval writes to result.json for one file's row scores (in file order)."""
    if not row_scores:
        raise ValueError("an LV-Eval file needs at least one row")
    total = 0.0
    for score in row_scores:
        total += score
    return round(100 * total / len(row_scores), 2)


def ordered_cells(cells: Iterable[Cell]) -> list[Cell]:
    """Order (dataset, level) cells as evaluation.py visits their files."""
    return sorted(cells, key=lambda cell: lveval_sort_key(f"{cell[0]}_{cell[1]}.jsonl"))


def result_json(scores: Mapping[Cell, float]) -> dict[str, float]:
    """result.json as a dict: `<dataset>_<level>` in file order."""
    return {f"{d}_{level}": scores[(d, level)] for d, level in ordered_cells(scores)}


def result_json_text(scores: Mapping[Cell, float]) -> str:
    return json.dumps(result_json(scores), ensure_ascii=False, indent=4)


def table(scores: Mapping[Cell, float]) -> dict[str, dict[str, float]]:
    """dataset -> {level: score}, rows and level keys in order of first appearance (result.csv's layout)."""
    rows: dict[str, dict[str, float]] = {}
    for dataset, level in ordered_cells(scores):
        rows.setdefault(dataset, {})[level] = scores[(dataset, level)]
    return rows


def csv_columns(rows: Mapping[str, Mapping[str, float]]) -> list[str]:
    columns: list[str] = []
    for levels in rows.values():
        columns.extend(level for level in levels if level not in columns)
    return columns


def result_csv_text(scores: Mapping[Cell, float]) -> str:
    """result.csv exactly as pandas writes LV-Eval's table: empty cells for missing levels."""
    rows = table(scores)
    columns = csv_columns(rows)
    lines = [",".join(["dataset_name", *columns])]
    for dataset, levels in rows.items():
        lines.append(",".join([dataset, *(repr(float(levels[c])) if c in levels else "" for c in columns)]))
    return "\n".join(lines) + "\n"


def averages(scores: Mapping[Cell, float]) -> dict:
    """The paper's averages over the rounded cells, each rounded to 2 decimals.

    per_dataset: mean over the dataset's levels; per_level: mean over the datasets at that level;
    overall: mean over every cell. ``complete`` says whether each is over a full set.
    """
    rows = table(scores)
    per_dataset = {d: round(sum(v.values()) / len(v), 2) for d, v in rows.items()}
    per_level = {}
    for level in LVEVAL_LEVELS:
        cells = [v[level] for v in rows.values() if level in v]
        if cells:
            per_level[level] = round(sum(cells) / len(cells), 2)
    values = list(scores.values())
    return {
        "per_dataset": per_dataset,
        "per_level": per_level,
        "overall": round(sum(values) / len(values), 2) if values else None,
        "incomplete_datasets": sorted(d for d, v in rows.items() if len(v) < len(LVEVAL_LEVELS)),
    }
