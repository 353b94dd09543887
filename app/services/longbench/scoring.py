"""Score a system's stored LongBench predictions as eval.py and result.py do, and store its tables.

Per row: the raw score in [0, 1] (MetricResult `longbench_raw`: an exact double, so every table is recomputed to the
digit). Per system and profile (MetricAggregate):
- `longbench`: each dataset's number in result.json (task `<dataset>`), each LongBench-E bucket
  (`<dataset>_e@<bucket>`; an empty bucket, NaN in result.json, is not stored) and result.py's columns (`v2@<column>`);
- `longbench_avg`: the app's averages, never LongBench's own numbers: `longbench@<category>`, `longbench@en`,
  `longbench@zh`, `longbench@all` (the mean of the categories), `longbench_e@<bucket>`, `longbench_e@all`.
"""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlalchemy import func, select

from app.core.metrics.longbench import BUCKETS, E, V1, V2, bucket_of
from app.core.metrics.longbench.benchmark import ROW_METRIC
from app.core.metrics.longbench.evaluation import score_dataset
from app.core.metrics.longbench.table import averages, bucket_scores, file_score, v2_table
from app.core.metrics.profiles import PROFILES
from app.extensions import db
from app.models import Document, LongbenchAnswer, LongbenchItem, MetricResult, Prediction, Question
from app.models.base import utcnow
from app.models.longbench import LONGBENCH
from app.services.benchmark_scores import replace_scores

CELL_METRIC = "longbench"
AVERAGE_METRIC = "longbench_avg"


def cell_task(variant: str, dataset: str, part: str = "") -> str:
    """The aggregate task of a result.json number: `narrativeqa`, `qasper_e@0-4k`, `v2@Overall`."""
    if variant == V2:
        return f"v2@{part}"
    return dataset if variant == V1 else f"{dataset}_e@{part}"


def average_task(variant: str, part: str) -> str:
    return f"{'longbench_e' if variant == E else 'longbench'}@{part}"


@dataclass(frozen=True)
class StoredRow:
    prediction_id: int
    question_id: int
    variant: str
    dataset: str
    position: int
    line_no: int
    pred: str
    answers: tuple[str, ...]
    all_classes: tuple[str, ...] | None
    length: float | None
    judge: bool | None  # v2
    difficulty: str
    length_class: str


def load_rows(system_id: int) -> list[StoredRow]:
    """The system's LongBench predictions, dataset by dataset in row order (the order eval.py sums in)."""
    stmt = (
        select(Prediction.id, Prediction.question_id, LongbenchItem.variant, LongbenchItem.dataset,
               LongbenchItem.position, Prediction.line_no, Prediction.text, LongbenchItem.answers,
               LongbenchItem.all_classes, LongbenchItem.length, LongbenchAnswer.judge, LongbenchItem.difficulty,
               LongbenchItem.length_class)
        .join(LongbenchItem, LongbenchItem.question_id == Prediction.question_id)
        .outerjoin(LongbenchAnswer, LongbenchAnswer.prediction_id == Prediction.id)
        .where(Prediction.system_id == system_id)
        .order_by(LongbenchItem.variant, LongbenchItem.dataset, LongbenchItem.position, Prediction.line_no,
                  Prediction.id)
    )
    rows = []
    for pid, qid, variant, dataset, position, line_no, text, answers, classes, length, judge, difficulty, \
            length_class in db.session.execute(stmt):
        parsed = json.loads(answers)
        rows.append(StoredRow(pid, qid, variant, dataset, position, line_no, text,
                              tuple(parsed) if isinstance(parsed, list) else (parsed,),
                              None if classes is None else tuple(json.loads(classes)), length, judge, difficulty,
                              length_class))
    return rows


def longbench_prediction_count(system_id: int) -> int:
    """How many LongBench predictions a system has: the units a metrics job counts for LongBench."""
    stmt = (select(func.count(Prediction.id)).join(Question, Prediction.question_id == Question.id)
            .join(Document, Question.document_id == Document.id)
            .where(Prediction.system_id == system_id, Document.collection == LONGBENCH))
    return db.session.scalar(stmt) or 0


def _groups(rows: Iterable[StoredRow]) -> dict[tuple[str, str], list[StoredRow]]:
    grouped: dict[tuple[str, str], list[StoredRow]] = defaultdict(list)
    for row in rows:
        grouped[(row.variant, row.dataset)].append(row)
    return dict(grouped)


def score_rows(rows: list[StoredRow], profile: str) -> tuple[dict[int, float], dict[str, dict], list[dict]]:
    """Per prediction its raw score; per question set its result (v1, E: result.json's cells; v2: result.py's
    columns); the notes of rows scored 0 where LongBench stops or silently gives 0."""
    values: dict[int, float] = {}
    results: dict[str, dict] = {V1: {}, E: {}, V2: {}}
    notes: list[dict] = []
    for (variant, dataset), group in _groups(rows).items():
        if variant == V2:
            for row in group:
                values[row.prediction_id] = float(bool(row.judge))
            results[V2] = v2_table((int(bool(row.judge)), row.difficulty, row.length_class) for row in group)
            continue
        scored, cell = score_dataset(dataset, variant, group, profile=profile)
        for row, score in zip(group, scored):
            values[row.prediction_id] = score.value
            if score.note:
                notes.append({"dataset": dataset, "variant": variant, "position": row.position, "note": score.note})
        results[variant][dataset] = cell
    return values, results, notes


def row_counts(rows: list[StoredRow]) -> dict[tuple, int]:
    """How many rows each number is over: (variant, dataset), LongBench-E's (E, dataset, bucket), v2's (V2, V2, column)."""
    counts: dict[tuple, int] = defaultdict(int)
    for row in rows:
        counts[(row.variant, row.dataset)] += 1
        if row.variant == E and row.length is not None:
            counts[(E, row.dataset, bucket_of(row.length))] += 1
        elif row.variant == V2:
            for column in ("Overall", "Easy" if row.difficulty == "easy" else "Hard",
                           {"short": "Short", "medium": "Medium"}.get(row.length_class, "Long")):
                counts[(V2, V2, column)] += 1
    return dict(counts)


def table_rows(results: dict[str, dict], counts: dict[tuple, int]) -> list[dict]:
    """The aggregate rows of one profile: every number result.json and result.txt hold, then the app's averages."""
    rows = []
    for dataset, value in results[V1].items():
        rows.append({"task": cell_task(V1, dataset), "metric": CELL_METRIC, "value": value,
                     "n": counts[(V1, dataset)]})
    for dataset, buckets in results[E].items():
        rows += [{"task": cell_task(E, dataset, bucket), "metric": CELL_METRIC, "value": value,
                  "n": counts[(E, dataset, bucket)]} for bucket, value in buckets.items() if value == value]  # not NaN
    for column, value in results[V2].items():
        if value is not None:
            rows.append({"task": cell_task(V2, "", column), "metric": CELL_METRIC, "value": value,
                         "n": counts[(V2, V2, column)]})
    for variant in (V1, E):
        if not results[variant]:
            continue
        summary = averages(results[variant])
        parts = {**summary["per_category"], **summary["per_language"], **summary["per_bucket"], "all": summary["overall"]}
        rows += [{"task": average_task(variant, part), "metric": AVERAGE_METRIC, "value": value,
                  "n": len(results[variant])} for part, value in parts.items() if value is not None]
    return rows


def score_longbench_system(system_id: int, *, profiles: Iterable[str] = PROFILES, job_id: int | None = None,
                           check_cancelled: Callable[[], None] | None = None) -> dict:
    """Score every LongBench prediction of a system under each profile; replace its LongBench results and tables."""
    profiles = tuple(profiles)
    rows = load_rows(system_id)
    counts = row_counts(rows)
    now = utcnow()
    results, aggregates = [], []
    for profile in profiles:
        if check_cancelled:
            check_cancelled()
        values, tables, _ = score_rows(rows, profile)
        results += [{"prediction_id": row.prediction_id, "system_id": system_id, "question_id": row.question_id,
                     "metric": ROW_METRIC, "profile": profile, "value": values[row.prediction_id], "job_id": job_id,
                     "computed_at": now} for row in rows]
        aggregates += [{**row, "system_id": system_id, "profile": profile, "job_id": job_id, "computed_at": now}
                       for row in table_rows(tables, counts)]
    replace_scores(system_id, profiles, row_metric=ROW_METRIC, table_metrics=(CELL_METRIC, AVERAGE_METRIC),
                   results=results, aggregates=aggregates)
    return {"longbench_rows": len(rows), "longbench_cells": len(_groups(rows))}


# --- the files LongBench writes, from the stored row scores ------------------------------------------------------


class NotScored(LookupError):
    """The system's LongBench rows of that question set have no stored scores under the profile yet."""


def stored_result(system_id: int, variant: str, profile: str) -> dict:
    """result.json's cells (v1, E) or result.py's columns (v2) of a system, from its stored raw row scores.

    The raw scores are exact doubles, so this recomputes eval.py's numbers to the digit (LongBench-E's buckets
    with numpy itself, an empty bucket NaN under the official profile)."""
    rows = [row for row in load_rows(system_id) if row.variant == variant]
    if not rows:
        return {}
    stored = dict(db.session.execute(select(MetricResult.prediction_id, MetricResult.value).where(
        MetricResult.system_id == system_id, MetricResult.metric == ROW_METRIC, MetricResult.profile == profile,
        MetricResult.prediction_id.in_([row.prediction_id for row in rows]))).all())
    missing = [row for row in rows if row.prediction_id not in stored]
    if missing:
        raise NotScored(f"{len(missing)} of its {len(rows)} rows have no {profile} score yet: run "
                        "`python run.py score-metrics` (or wait for its metrics job)")
    if variant == V2:
        return v2_table((int(stored[row.prediction_id]), row.difficulty, row.length_class) for row in rows)
    cells = {}
    for (_, dataset), group in _groups(rows).items():
        if variant == E:
            cells[dataset] = bucket_scores(((stored[r.prediction_id], r.length) for r in group), profile=profile)
        else:
            cells[dataset] = file_score([stored[r.prediction_id] for r in group])
    return cells


__all__ = ["AVERAGE_METRIC", "BUCKETS", "CELL_METRIC", "NotScored", "cell_task", "longbench_prediction_count",
           "score_longbench_system", "stored_result"]
