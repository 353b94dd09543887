"""eval.py's numbers and result.py's table, from per-row scores: the file score, LongBench-E's buckets, result.json,
result.txt, and the averages the app adds (per category and language, as LongBench's README and OpenCompass group them).

Restated from THUDM/LongBench at commit 2e00731f8d0bff23dc4325161044d0ed8af94c1e: LongBench/eval.py (`scorer`,
`scorer_e`, the result.json it writes) and result.py (LongBench v2's result.txt).
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence

from app.core.metrics.longbench import BUCKETS, CATEGORIES, DATASETS, bucket_of, in_language
from app.core.metrics.profiles import OFFICIAL, resolve_profile

Cell = float | dict[str, float]


def file_score(row_scores: Sequence[float]) -> float:
    """scorer: round(100 × Σ / n, 2), Σ summed from 0. in file order."""
    if not row_scores:
        raise ValueError("a LongBench file needs at least one row")
    total = 0.0
    for score in row_scores:
        total += score
    return round(100 * total / len(row_scores), 2)


def bucket_scores(rows: Iterable[tuple[float, int | float]], *, profile: str = OFFICIAL) -> dict[str, float]:
    """scorer_e: per bucket of `length`, round(100 × numpy.mean(scores), 2), in the bucket order.

    numpy's mean sums pairwise, not in file order, so numpy itself computes it. An empty bucket's mean is NaN (with
    numpy's warning) and stays NaN in result.json: the official profile keeps it; fixed leaves the bucket out.
    """
    import numpy

    grouped: dict[str, list[float]] = {bucket: [] for bucket in BUCKETS}
    for score, length in rows:
        grouped[bucket_of(length)].append(score)
    official = resolve_profile(profile) == OFFICIAL
    result = {}
    for bucket, scores in grouped.items():
        if not scores:
            if official:
                result[bucket] = math.nan
            continue
        result[bucket] = float(round(100 * numpy.mean(numpy.asarray(scores, dtype=numpy.float64)), 2))
    return result


def result_json(cells: Mapping[str, Cell]) -> dict[str, Cell]:
    """result.json as a dict; eval.py orders datasets by os.listdir (the file system's order), here by name."""
    return {dataset: cells[dataset] for dataset in sorted(cells)}


def result_json_text(cells: Mapping[str, Cell]) -> str:
    """result.json exactly as eval.py writes it (json.dump, indent 4, no final newline), datasets by name."""
    return json.dumps(result_json(cells), ensure_ascii=False, indent=4)


def _mean(values: list[float]) -> float | None:
    values = [v for v in values if not math.isnan(v)]
    return round(sum(values) / len(values), 2) if values else None


def averages(cells: Mapping[str, Cell]) -> dict:
    """The app's averages over the rounded dataset scores, each rounded to 2 decimals (never eval.py's numbers).

    v1: per category (LongBench's six), per language ("en", "zh": code in both, as OpenCompass's longbench_en and
    longbench_zh) and overall: the mean of the category means (OpenCompass's `longbench`). LongBench-E (cells by
    bucket): each bucket's mean over the datasets, as the README's chart of LongBench-E.
    """
    flat = {d: v for d, v in cells.items() if not isinstance(v, dict)}
    per_category = {}
    for category in CATEGORIES:
        mean = _mean([v for d, v in flat.items() if DATASETS[d].category == category])
        if mean is not None:
            per_category[category] = mean
    per_language = {}
    for language in ("en", "zh"):
        mean = _mean([v for d, v in flat.items() if in_language(d, language)])
        if mean is not None:
            per_language[language] = mean
    per_bucket = {}
    for bucket in BUCKETS:
        mean = _mean([v[bucket] for v in cells.values() if isinstance(v, dict) and bucket in v])
        if mean is not None:
            per_bucket[bucket] = mean
    overall = _mean(list(per_category.values())) if per_category else _mean(list(per_bucket.values()))
    return {"per_category": per_category, "per_language": per_language, "per_bucket": per_bucket,
            "overall": overall, "complete": set(flat) == set(DATASETS)}


# --- LongBench v2: result.py --------------------------------------------------------------------

V2_COLUMNS = ("Overall", "Easy", "Hard", "Short", "Medium", "Long")
V2_HEADER = "Model\t" + "\t".join(V2_COLUMNS)


def v2_table(rows: Iterable[tuple[int, str, str]]) -> dict[str, float | None]:
    """result.py's numbers for one model: rows (acc = int(judge), difficulty, length), each column
    round(100 × correct / n, 1). result.py counts any difficulty but "easy" as hard and any length but "short" and
    "medium" as long, and divides by zero (stops) for an empty column; here that column is None."""
    counts = {column: [0, 0] for column in V2_COLUMNS}
    for acc, difficulty, length in rows:
        columns = ["Overall", "Easy" if difficulty == "easy" else "Hard",
                   "Short" if length == "short" else "Medium" if length == "medium" else "Long"]
        for column in columns:
            counts[column][0] += 1
            counts[column][1] += acc
    return {column: (round(100 * correct / n, 1) if n else None) for column, (n, correct) in counts.items()}


def result_txt(tables: Mapping[str, Mapping[str, float | None]]) -> str:
    """result.txt as result.py writes it: a header, one tab-separated line per model (models by name here, where
    result.py follows os.listdir), no final newline. An empty column (result.py stops there) is written "-"."""
    lines = [V2_HEADER]
    for name in sorted(tables):
        table = tables[name]
        lines.append("\t".join([name, *("-" if table[c] is None else str(table[c]) for c in V2_COLUMNS)]))
    return "\n".join(lines)
