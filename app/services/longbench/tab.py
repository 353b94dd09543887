"""The leaderboard's LongBench tab, its JSON, and the rows behind every number it shows."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from sqlalchemy import func, select

from app.core.metrics.longbench import BUCKETS, CATEGORIES, DATASETS, E, E_DATASETS, V1, V2, bucket_of
from app.core.metrics.longbench.benchmark import ROW_METRIC
from app.core.metrics.longbench.table import V2_COLUMNS
from app.extensions import db
from app.models import Document, LongbenchItem, MetricAggregate, MetricResult, Prediction, Question, System
from app.services.longbench.scoring import AVERAGE_METRIC, CELL_METRIC

SCALE = "0-100, rounded as LongBench's eval.py (v1, LongBench-E) and result.py (v2); averages are the app's"
LANGUAGES = {"en": "English", "zh": "Chinese"}
PER_PAGE = 50


@dataclass
class SystemTables:
    system_id: int
    name: str
    v1: dict[str, float] = field(default_factory=dict)  # dataset -> result.json's number
    e: dict[str, dict[str, float]] = field(default_factory=dict)  # dataset -> bucket -> number
    v2: dict[str, float] = field(default_factory=dict)  # column -> result.txt's number
    averages: dict[str, float] = field(default_factory=dict)  # `longbench@…` / `longbench_e@…` -> the app's mean
    counts: dict[str, int] = field(default_factory=dict)  # aggregate task -> rows

    def average(self, variant: str, part: str) -> float | None:
        return self.averages.get(f"{'longbench_e' if variant == E else 'longbench'}@{part}")


def _split(task: str) -> tuple[str, str]:
    name, _, part = task.partition("@")
    return name, part


def system_tables(profile: str) -> list[SystemTables]:
    """Every system's LongBench numbers under one profile, read from its stored aggregates (name by name)."""
    stmt = (select(MetricAggregate.system_id, System.name, MetricAggregate.task, MetricAggregate.metric,
                   MetricAggregate.value, MetricAggregate.n)
            .join(System, System.id == MetricAggregate.system_id)
            .where(MetricAggregate.profile == profile, MetricAggregate.metric.in_((CELL_METRIC, AVERAGE_METRIC))))
    tables: dict[int, SystemTables] = {}
    for system_id, name, task, metric, value, n in db.session.execute(stmt):
        table = tables.setdefault(system_id, SystemTables(system_id, name))
        table.counts[task] = n
        if metric == AVERAGE_METRIC:
            table.averages[task] = value
            continue
        head, part = _split(task)
        if head == V2:
            table.v2[part] = value
        elif part:
            table.e.setdefault(head.removesuffix("_e"), {})[part] = value
        else:
            table.v1[head] = value
    return sorted(tables.values(), key=lambda t: t.name.lower())


@dataclass
class LongbenchTab:
    systems: list[SystemTables]
    datasets: tuple[str, ...]
    e_datasets: tuple[str, ...]
    categories: tuple[str, ...]
    languages: dict[str, str]
    buckets: tuple[str, ...]
    v2_columns: tuple[str, ...]
    category_of: dict[str, str]


def longbench_tab(profile: str) -> LongbenchTab:
    return LongbenchTab(systems=system_tables(profile), datasets=tuple(DATASETS), e_datasets=E_DATASETS,
                        categories=CATEGORIES, languages=LANGUAGES, buckets=BUCKETS, v2_columns=V2_COLUMNS,
                        category_of={name: d.category for name, d in DATASETS.items()})


def longbench_json(profile: str) -> list[dict]:
    """Per system: result.json's numbers (v1 and LongBench-E, datasets by name), result.txt's (v2), the app's
    averages (per category, language and bucket, overall), each labelled with its profile and scale."""
    result = []
    for table in system_tables(profile):
        result.append({
            "system": table.name, "profile": profile, "scale": SCALE,
            "result_json": {d: table.v1[d] for d in sorted(table.v1)},
            "result_json_e": {d: {b: table.e[d][b] for b in BUCKETS if b in table.e[d]} for d in sorted(table.e)},
            "result_v2": {c: table.v2[c] for c in V2_COLUMNS if c in table.v2},
            "averages": dict(sorted(table.averages.items())),
        })
    return result


# --- the rows behind a number ----------------------------------------------------------------------------------


@dataclass
class RowValue:
    position: int
    question: str
    document_title: str
    prediction: str
    answers: list[str]
    value: float
    line_no: int
    bucket: str  # LongBench-E's bucket, v2's difficulty and length


@dataclass
class RowsPage:
    items: list[RowValue]
    total: int
    page: int
    pages: int
    aggregate: tuple[float, int] | None
    per_page: int = PER_PAGE


def _belongs(variant: str, part: str, length: float | None, difficulty: str, length_class: str) -> bool:
    if not part or part == "all":
        return True
    if variant == E:
        return length is not None and bucket_of(length) == part
    if variant == V2:
        return part == "Overall" or part.lower() in (difficulty, length_class)
    return True


def rows_behind(system_id: int, variant: str, dataset: str, part: str, profile: str, *, page: int = 1
                ) -> RowsPage | None:
    """The scored rows behind one number of the LongBench tab (a dataset, a LongBench-E bucket, a v2 column), in
    the data file's order; None for a question set or dataset LongBench does not have."""
    if variant not in (V1, E, V2) or (variant != V2 and dataset not in DATASETS):
        return None
    if variant == E and dataset not in E_DATASETS:
        return None
    stmt = (select(LongbenchItem.position, Question.instruction, Document.title, Prediction.text,
                   LongbenchItem.answers, MetricResult.value, Prediction.line_no, LongbenchItem.length,
                   LongbenchItem.difficulty, LongbenchItem.length_class)
            .join(Question, Question.id == LongbenchItem.question_id)
            .join(Document, Document.id == Question.document_id)
            .join(Prediction, Prediction.question_id == Question.id)
            .join(MetricResult, (MetricResult.prediction_id == Prediction.id) & (MetricResult.metric == ROW_METRIC)
                  & (MetricResult.profile == profile))
            .where(Prediction.system_id == system_id, LongbenchItem.variant == variant,
                   LongbenchItem.dataset == (V2 if variant == V2 else dataset))
            .order_by(LongbenchItem.position, Prediction.id))
    rows = [r for r in db.session.execute(stmt) if _belongs(variant, part, r[7], r[8], r[9])]
    pages = max(1, -(-len(rows) // PER_PAGE))
    page = min(max(page, 1), pages)
    items = []
    for position, question, title, text, answers, value, line_no, length, difficulty, length_class in \
            rows[(page - 1) * PER_PAGE: page * PER_PAGE]:
        parsed = json.loads(answers)
        items.append(RowValue(position, question, title, text, parsed if isinstance(parsed, list) else [parsed],
                              value, line_no, bucket_of(length) if variant == E and length is not None else
                              (f"{difficulty}, {length_class}" if variant == V2 else "")))
    task = (f"v2@{part or 'Overall'}" if variant == V2 else dataset if variant == V1 else f"{dataset}_e@{part}")
    aggregate = db.session.execute(select(MetricAggregate.value, MetricAggregate.n).where(
        MetricAggregate.system_id == system_id, MetricAggregate.task == task, MetricAggregate.metric == CELL_METRIC,
        MetricAggregate.profile == profile)).first()
    return RowsPage(items=items, total=len(rows), page=page, pages=pages,
                    aggregate=tuple(aggregate) if aggregate else None)


def has_longbench(system_id: int) -> bool:
    return db.session.scalar(select(func.count()).select_from(MetricAggregate).where(
        MetricAggregate.system_id == system_id, MetricAggregate.metric == CELL_METRIC)) > 0


__all__ = ["LongbenchTab", "RowsPage", "SystemTables", "longbench_json", "longbench_tab", "rows_behind"]
