"""Everything the LV-Eval page and the leaderboard's LV-Eval tab show, from stored row scores and aggregates."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import func, select

from app.core.metrics.files import LVEVAL_DATASETS, LVEVAL_LEVELS
from app.core.stats import lveval as analysis
from app.extensions import db
from app.models import LvevalItem, MetricAggregate, MetricResult, System
from app.services.cache import NO_STUDY, cached
from app.services.lveval.scoring import (
    AVERAGE_METRIC,
    CELL_METRIC,
    OVERALL_TASK,
    ROW_METRIC,
    level_task,
)

OVERALL = "overall"
NEEDLE_DATASETS = ("factrecall_en", "factrecall_zh")


@dataclass
class SystemView:
    system_id: int
    name: str
    context_window: int | None
    points: dict[str, analysis.Point | None] = field(default_factory=dict)  # level -> mean and interval
    table: dict[str, float] = field(default_factory=dict)  # level -> LV-Eval's number (rounded its way)
    average: float | None = None  # the paper's average over levels (or overall)
    ceiling: analysis.Ceiling | None = None
    flags: dict[str, bool] = field(default_factory=dict)
    # Overall only: per level, how many of LV-Eval's datasets the system has; where that is not all of them,
    # `partial` keeps the mean over its own datasets (shown as such, never as LV-Eval's overall, never ranked).
    datasets: dict[str, int] = field(default_factory=dict)
    partial: dict[str, float] = field(default_factory=dict)

    @property
    def incomplete(self) -> bool:
        return any(n < len(LVEVAL_DATASETS) for n in self.datasets.values())


@dataclass
class Heatmap:
    system: str
    dataset: str
    depths: list[str]
    cells: list[list[float | None]]
    counts: list[list[int]]
    missing: int  # rows of this system and dataset whose needle depth is unknown


@dataclass
class Ablation:
    variant: str
    base: str
    kind: str
    deltas: dict[str, analysis.Point | None]


@dataclass
class LvevalView:
    profile: str
    dataset: str
    levels: tuple[str, ...]
    systems: list[SystemView]
    context_words: dict[str, float]
    heatmaps: list[Heatmap]
    ablations: list[Ablation]
    datasets_total: int = len(LVEVAL_DATASETS)  # what an overall is the mean over


def _scores(profile: str):
    """(system_id, question_id, dataset, level, length, depth, score) of every stored LV-Eval row score."""
    stmt = (select(MetricResult.system_id, MetricResult.question_id, LvevalItem.dataset, LvevalItem.level,
                   LvevalItem.length, LvevalItem.depth, MetricResult.value)
            .join(LvevalItem, LvevalItem.question_id == MetricResult.question_id)
            .where(MetricResult.metric == ROW_METRIC, MetricResult.profile == profile))
    return db.session.execute(stmt).all()


def _aggregates(profile: str) -> dict[tuple[int, str], float]:
    stmt = select(MetricAggregate.system_id, MetricAggregate.task, MetricAggregate.value).where(
        MetricAggregate.profile == profile, MetricAggregate.metric.in_((CELL_METRIC, AVERAGE_METRIC)))
    return {(sid, task): value for sid, task, value in db.session.execute(stmt)}


def _context_words(dataset: str) -> dict[str, float]:
    stmt = select(LvevalItem.level, func.avg(LvevalItem.length)).where(LvevalItem.length.is_not(None))
    if dataset != OVERALL:
        stmt = stmt.where(LvevalItem.dataset == dataset)
    return {level: float(mean) for level, mean in db.session.execute(stmt.group_by(LvevalItem.level)) if mean}


def build_view(profile: str, dataset: str = OVERALL, *, words_per_token: float = 1.0) -> LvevalView:
    """The curves, tables, ceilings, needle heatmaps and ablation deltas for one dataset (or overall); cached
    until the data change (it reads every LV-Eval row score and bootstraps each cell: 0.5 s at 27,500 rows)."""
    return cached(("lveval-view", profile, dataset, words_per_token),
                  lambda: _build_view(profile, dataset, words_per_token), study=NO_STUDY)  # no study's rows


def _build_view(profile: str, dataset: str, words_per_token: float) -> LvevalView:
    rows = _scores(profile)
    aggregates = _aggregates(profile)
    system_ids = sorted({row[0] for row in rows})
    systems = {s.id: s for s in db.session.scalars(select(System).where(System.id.in_(system_ids)))}
    # system -> level -> dataset -> [scores]; and system -> question -> score for paired deltas
    grouped: dict[int, dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    by_question: dict[int, dict[int, tuple[str, str, float]]] = defaultdict(dict)
    needles: dict[tuple[int, str], list[tuple[str, float, float]]] = defaultdict(list)
    missing_depth: dict[tuple[int, str], int] = defaultdict(int)
    for system_id, question_id, name, level, _length, depth, score in rows:
        grouped[system_id][level][name].append(score)
        by_question[system_id][question_id] = (name, level, score)
        if name in NEEDLE_DATASETS:
            if depth is None:
                missing_depth[(system_id, name)] += 1
            else:
                needles[(system_id, name)].append((level, depth, score))
    context_words = _context_words(dataset)
    views = []
    for system_id in sorted(system_ids, key=lambda sid: systems[sid].name.lower()):
        system = systems[system_id]
        view = SystemView(system_id, system.name, system.context_window)
        for level in LVEVAL_LEVELS:
            per_dataset = grouped[system_id].get(level, {})
            if dataset == OVERALL:
                value = aggregates.get((system_id, level_task(level)))
                if per_dataset:
                    view.datasets[level] = len(per_dataset)
                if not analysis.overall_complete(per_dataset):
                    if value is not None:
                        view.partial[level] = value
                    continue
                view.points[level] = analysis.overall_point(per_dataset)
            else:
                view.points[level] = analysis.mean_point(per_dataset.get(dataset, []))
                value = aggregates.get((system_id, f"{dataset}_{level}"))
            if value is not None:
                view.table[level] = value
        view.average = aggregates.get((system_id, OVERALL_TASK if dataset == OVERALL else dataset))
        if dataset == OVERALL and (view.incomplete or len(view.datasets) < len(LVEVAL_LEVELS)):
            view.partial["avg"], view.average = view.average, None  # the paper's average is over all 55 cells
        means = {level: p.mean for level, p in view.points.items() if p is not None}
        view.ceiling = analysis.ceiling(LVEVAL_LEVELS, means, system.context_window, context_words, words_per_token)
        if view.ceiling:
            view.flags = analysis.leakage_flags(view.points, view.ceiling.values)
        views.append(view)
    heatmaps = []
    for name in NEEDLE_DATASETS:
        for system_id in sorted(system_ids, key=lambda sid: systems[sid].name.lower()):
            depths, cells, counts = analysis.needle_cells(needles.get((system_id, name), []), LVEVAL_LEVELS)
            missing = missing_depth.get((system_id, name), 0)
            if any(counts_row for row in counts for counts_row in row) or missing:
                heatmaps.append(Heatmap(systems[system_id].name, name, depths, cells, counts, missing))
    return LvevalView(profile=profile, dataset=dataset, levels=LVEVAL_LEVELS, systems=views,
                      context_words=context_words, heatmaps=heatmaps,
                      ablations=_ablations(systems, by_question, dataset))


def _ablations(systems: dict[int, System], by_question: dict[int, dict[int, tuple[str, str, float]]],
               dataset: str) -> list[Ablation]:
    """Per level, variant minus base over the questions both answered (the mean of dataset means overall)."""
    result = []
    for system in sorted(systems.values(), key=lambda s: s.name.lower()):
        base = systems.get(system.variant_of_id or -1)
        if not system.variant_kind or base is None:
            continue
        deltas: dict[str, analysis.Point | None] = {}
        for level in LVEVAL_LEVELS:
            differences: dict[str, list[float]] = defaultdict(list)
            for question_id, (name, lv, score) in by_question[system.id].items():
                other = by_question[base.id].get(question_id)
                if lv == level and other is not None and (dataset == OVERALL or name == dataset):
                    differences[name].append(score - other[2])
            deltas[level] = analysis.overall_point(differences) if dataset == OVERALL else \
                analysis.mean_point(differences.get(dataset, []))
        result.append(Ablation(system.name, base.name, system.variant_kind, deltas))
    return result


def dataset_choices() -> list[str]:
    return [OVERALL, *LVEVAL_DATASETS]


def overview(profile: str) -> list[SystemView]:
    """The leaderboard tab: LV-Eval's overall per level and the overall average, per system."""
    return build_view(profile, OVERALL).systems
