"""Queries behind the leaderboard: one row per system, a per-task matrix and per-question drill-down."""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import and_, func, or_, select, true

from app.core.metrics import METRIC_KEYS
from app.core.metrics.files import LEVAL_TASKS as LEVAL_TASK_ORDER
from app.core.metrics.selection import SCOPE_COUNTED
from app.core.text import search_terms
from app.extensions import db
from app.models import (
    Document,
    MetricAggregate,
    MetricResult,
    Prediction,
    PredictionFile,
    Question,
    Reference,
    System,
)
from app.models.corpus import HUMAN_EVAL
from app.services.benchmarks import plugin_collections, plugin_table_metrics
from app.services.cache import NO_STUDY, cached
from app.services.judge import win_rates
from app.services.metrics.compute import AVERAGED_METRICS, HUMAN_EVAL_BUCKET, OVERALL
from app.services.system_keys import keys_of

METRIC_LABELS = {
    "exact_match": "Exam (exact match)", "f1": "F1", "rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L",
    "rouge_geo": "ROUGE geo-mean", "keyword_f1": "Keyword F1", "avg_words": "Avg words", "delta_words": "ΔL (words)",
    "pred_words": "Prediction words", "ref_words": "Reference words", "lveval": "LV-Eval score",
}
# The leaderboard's columns, as in L-Eval's: exam, F1 and ROUGE-L averages, judge win %, length and ΔL.
LEADERBOARD_METRICS = ("exact_match", "f1", "rougeL", "avg_words", "delta_words")
# The human-evaluation subset's own column group: it is never part of the task averages above.
SUBSET_METRICS = ("f1", "rougeL", "avg_words", "delta_words")
SUBSET_SORTS = tuple(f"{HUMAN_EVAL_BUCKET}:{m}" for m in SUBSET_METRICS + ("judge",))
PRIMARY_ORDER = ("exact_match", "keyword_f1", "rougeL", "f1")
# Every column of the by-system board, per group; `leaderboard_columns` drops those empty for every system.
KEY_COLUMNS = ("context_window", "input_tokens", "parameters", "flags")
TASK_COLUMNS = ("exact_match", "f1", "rougeL", "judge", "avg_words", "delta_words", "predictions")
SUBSET_COLUMNS = SUBSET_METRICS + ("judge",)
FLAG_KEYS = ("retrieval", "prompt_engineering", "in_domain_data")
# Per-question values behind a file-level metric.
ITEM_KEYS = {"avg_words": "pred_words", "delta_words": "pred_words"}
# Metrics whose per-question value is a whole number of words (shown without decimals).
PER_QUESTION_WORD_COUNTS = frozenset(("avg_words", "delta_words", "pred_words", "ref_words"))
PER_PAGE = 50
# The other benchmarks' tables (services.benchmarks): each has its own tab.
PLUGIN_METRICS = plugin_table_metrics()


def task_sort_key(task: str) -> tuple:
    """L-Eval's task order, then other tasks by name, then the human-eval subset."""
    if task == HUMAN_EVAL_BUCKET:
        return (2, 0, task)
    if task in LEVAL_TASK_ORDER:
        return (0, LEVAL_TASK_ORDER.index(task), task)
    return (1, 0, task)


@dataclass
class LeaderboardRow:
    system_id: int
    system: str
    predictions: int
    values: dict[str, tuple[float, int]] = field(default_factory=dict)
    tasks: dict[str, int] = field(default_factory=dict)  # metric -> how many tasks the average covers
    judge: list[dict] = field(default_factory=list)
    keys: dict = field(default_factory=dict)  # L-Eval's leaderboard keys (services.system_keys.keys_of)
    subset: dict[str, tuple[float, int]] = field(default_factory=dict)  # the human-eval subset's aggregates

    def value(self, metric: str) -> float | None:
        entry = self.values.get(metric)
        return entry[0] if entry else None

    @property
    def subset_judge(self) -> dict | None:
        """The first judge entry (default baseline first) that covers the human-eval subset."""
        return next((e for e in self.judge if e.get("scope") == HUMAN_EVAL_BUCKET and e.get("win_rate") is not None),
                    None)

    @property
    def task_judges(self) -> list[dict]:
        """Judge entries (default baseline first) over L-Eval's task files, not the human-eval subset:
        a rate on the subset belongs to the subset's own column, never under the tasks' heading."""
        return [e for e in self.judge if e.get("scope") != HUMAN_EVAL_BUCKET and e.get("win_rate") is not None]

    @property
    def task_judge(self) -> dict | None:
        return next(iter(self.task_judges), None)

    def has(self, group: str, column: str) -> bool:
        """Whether this row has something to show in one column of the board."""
        if group == "keys":
            if column == "flags":
                return any(self.keys.get(name) is not None for name in FLAG_KEYS)
            return bool(self.keys.get(column))
        if group == "subset":
            return (self.subset_judge if column == "judge" else self.subset.get(column)) is not None
        if column == "judge":
            return self.task_judge is not None
        return column == "predictions" or column in self.values

    @property
    def has_task_scores(self) -> bool:
        """Whether any task average (exam, F1, ROUGE-L) exists: else only the subset says something."""
        return any(m in self.values for m in AVERAGED_METRICS)


def _aggregates(profile: str, task: str | None = None, system_id: int | None = None):
    stmt = select(MetricAggregate).where(MetricAggregate.profile == profile)
    if task is not None:
        stmt = stmt.where(MetricAggregate.task == task)
    if system_id is not None:
        stmt = stmt.where(MetricAggregate.system_id == system_id)
    return db.session.scalars(stmt)


def leaderboard(profile: str, sort: str = "exact_match") -> list[LeaderboardRow]:
    """Rows for every system with predictions, sorted by `sort` (highest first; missing values last).

    The rows are cached until the data change (they count every prediction and read every aggregate) and
    shared by the requests that ask for them: read them, never change them.
    """
    return sort_rows(cached(("leaderboard", profile), lambda: _board(profile), study=NO_STUDY), sort)


def _board(profile: str) -> list[LeaderboardRow]:
    # L-Eval's board: the other benchmarks' predictions have their own tabs (services.benchmarks).
    counts = dict(db.session.execute(
        select(Prediction.system_id, func.count()).join(Question, Prediction.question_id == Question.id)
        .join(Document, Question.document_id == Document.id).where(Document.collection.not_in(plugin_collections()))
        .group_by(Prediction.system_id)
    ).all())
    rows = {
        system.id: LeaderboardRow(system_id=system.id, system=system.name, predictions=counts[system.id],
                                  keys=keys_of(system))
        for system in db.session.scalars(select(System).where(System.id.in_(list(counts))))
    }
    for agg in _aggregates(profile):
        row = rows.get(agg.system_id)
        if row is None:
            continue
        if agg.task == OVERALL:
            row.values[agg.metric] = (agg.value, agg.n)
        elif agg.task == HUMAN_EVAL_BUCKET:
            if agg.metric in SUBSET_METRICS:
                row.subset[agg.metric] = (agg.value, agg.n)
        elif agg.metric in AVERAGED_METRICS:
            row.tasks[agg.metric] = row.tasks.get(agg.metric, 0) + 1
    rates = win_rates()
    for row in rows.values():
        row.judge = list(rates.get(row.system, []))
    return list(rows.values())


def leaderboard_columns(rows: list[LeaderboardRow]) -> dict[str, tuple[str, ...]]:
    """The board's columns per group ('keys', 'tasks', 'subset'), without those empty for every row."""
    groups = {"keys": KEY_COLUMNS, "tasks": TASK_COLUMNS, "subset": SUBSET_COLUMNS}
    return {group: tuple(c for c in columns if any(row.has(group, c) for row in rows))
            for group, columns in groups.items()}


def sort_rows(rows: list[LeaderboardRow], sort: str) -> list[LeaderboardRow]:
    """Sort by `sort` (highest first; missing values last), ties by system name."""
    ordered = sorted(rows, key=lambda r: r.system.lower())
    return sorted(ordered, key=lambda r: _sort_value(r, sort))


def _sort_value(row: LeaderboardRow, sort: str) -> tuple:
    """Highest first and missing values last; ΔL sorts by closeness to zero."""
    if sort in SUBSET_SORTS:
        metric = sort.split(":", 1)[1]
        entry = row.subset_judge if metric == "judge" else row.subset.get(metric)
        value = None if entry is None else (entry["win_rate"] if metric == "judge" else entry[0])
        if value is not None and metric == "delta_words":
            value = -abs(value)
    elif sort == "judge":
        value = _judge_rate(row)
    elif sort == "delta_words":
        value = None if row.value(sort) is None else -abs(row.value(sort))
    elif sort in METRIC_KEYS:
        value = row.value(sort)
    else:
        return (False, 0.0)  # keep the alphabetical order
    return (value is None, -(value or 0.0))


def _judge_rate(row: LeaderboardRow) -> float | None:
    entry = row.task_judge
    return None if entry is None else entry["win_rate"]


def primary_metric(metrics: set[str]) -> str | None:
    return next((m for m in PRIMARY_ORDER if m in metrics), None)


@dataclass
class TaskMatrix:
    tasks: list[str]
    metric_of: dict[str, str]  # task -> metric shown
    systems: list[tuple[int, str]]
    cells: dict[tuple[int, str], tuple[float, int]]


def task_matrix(profile: str, metric: str = "primary") -> TaskMatrix:
    """Systems × tasks: each task's main metric (or the one asked for), under one profile."""
    available: dict[str, set[str]] = {}
    values: dict[tuple[int, str, str], tuple[float, int]] = {}
    for agg in _aggregates(profile):
        if agg.task == OVERALL or agg.metric in PLUGIN_METRICS:
            continue
        available.setdefault(agg.task, set()).add(agg.metric)
        values[(agg.system_id, agg.task, agg.metric)] = (agg.value, agg.n)
    metric_of = {}
    for task, metrics in available.items():
        chosen = primary_metric(metrics) if metric == "primary" else (metric if metric in metrics else None)
        if chosen:
            metric_of[task] = chosen
    tasks = sorted(metric_of, key=task_sort_key)
    system_ids = sorted({sid for sid, task, m in values if metric_of.get(task) == m})
    names = dict(db.session.execute(select(System.id, System.name).where(System.id.in_(system_ids))).all())
    cells = {(sid, task): values[(sid, task, m)] for (sid, task, m) in values if metric_of.get(task) == m}
    systems = sorted(((sid, names[sid]) for sid in system_ids), key=lambda item: item[1].lower())
    return TaskMatrix(tasks=tasks, metric_of=metric_of, systems=systems, cells=cells)


def system_tasks(system_id: int, profile: str) -> list[tuple[str, dict[str, tuple[float, int]]]]:
    """One system's aggregates per task ('*' first), under one profile."""
    by_task: dict[str, dict[str, tuple[float, int]]] = {}
    for agg in _aggregates(profile, system_id=system_id):
        if agg.metric in PLUGIN_METRICS:
            continue  # the other benchmarks' tables are on their own pages
        by_task.setdefault(agg.task, {})[agg.metric] = (agg.value, agg.n)
    overall = by_task.pop(OVERALL, None)
    ordered = sorted(by_task.items(), key=lambda item: task_sort_key(item[0]))
    return ([(OVERALL, overall)] if overall else []) + ordered


@dataclass
class QuestionValue:
    task: str
    document_title: str
    file: str
    line_no: int
    question: str
    prediction: str
    value: float
    others: dict[str, float]
    references: list[tuple[str, str]]


@dataclass
class QuestionPage:
    items: list[QuestionValue]
    total: int
    page: int
    pages: int
    aggregate: tuple[float, int] | None
    per_page: int = PER_PAGE
    unfiltered: int = 0  # values before the search and the document filter
    documents: list[tuple[int, str]] = field(default_factory=list)  # the filter's choices


def _bucket_filter(task: str, metric: str):
    """The answers behind one aggregate: a task's counted rows (selection), the human-eval subset's every row."""
    counted = MetricResult.scope == SCOPE_COUNTED
    if task == HUMAN_EVAL_BUCKET:
        return Document.collection == HUMAN_EVAL
    if task == OVERALL:
        return and_(Document.collection != HUMAN_EVAL, counted) if metric in AVERAGED_METRICS else true()
    return and_(Document.collection != HUMAN_EVAL, Document.task == task, counted)


def _searched(terms: list[str]):
    """Every term in the question, the prediction or the document's title (core.text.search_terms' words)."""
    return and_(true(), *(or_(func.lower(Question.instruction).contains(term, autoescape=True),
                              func.lower(Prediction.text).contains(term, autoescape=True),
                              func.lower(Document.title).contains(term, autoescape=True)) for term in terms))


def question_values(system_id: int, task: str, metric: str, profile: str, *, page: int = 1, sort: str = "file",
                    per_page: int = PER_PAGE, search: str = "", document_id: int | None = None) -> QuestionPage:
    """The per-question values behind one aggregate, with each prediction and its references; `search` keeps
    those whose question, prediction or document title has every word of it, `document_id` one document's.

    File order is the order of the prediction files, each line by line (as imported)."""
    key = ITEM_KEYS.get(metric, metric)
    base = (
        select(Prediction.id)
        .join(Question, Prediction.question_id == Question.id)
        .join(Document, Question.document_id == Document.id)
        .join(MetricResult, and_(MetricResult.prediction_id == Prediction.id, MetricResult.metric == key,
                                 MetricResult.profile == profile))
        .where(Prediction.system_id == system_id, _bucket_filter(task, metric))
    )
    unfiltered = db.session.scalar(select(func.count()).select_from(base.subquery())) or 0
    documents = list(db.session.execute(
        select(Document.id, Document.title).where(Document.id.in_(base.with_only_columns(Question.document_id)))
        .order_by(Document.title, Document.id)).all())
    base = base.where(_searched(search_terms(search)))
    if document_id is not None:
        base = base.where(Question.document_id == document_id)
    total = db.session.scalar(select(func.count()).select_from(base.subquery())) or 0
    pages = max(1, -(-total // per_page))
    page = min(max(page, 1), pages)
    order = {"low": (MetricResult.value.asc(),), "high": (MetricResult.value.desc(),)}.get(sort, ())
    file_order = (Prediction.file_id.is_(None), Prediction.file_id, Prediction.line_no, Prediction.id)
    ids = list(db.session.scalars(
        base.order_by(*order, *file_order).limit(per_page).offset((page - 1) * per_page)
    ))
    agg = db.session.scalars(select(MetricAggregate).where(
        MetricAggregate.system_id == system_id, MetricAggregate.task == task, MetricAggregate.metric == metric,
        MetricAggregate.profile == profile,
    )).first()
    return QuestionPage(items=_question_items(ids, metric, profile), total=total, page=page, pages=pages,
                        aggregate=(agg.value, agg.n) if agg else None, per_page=per_page, unfiltered=unfiltered,
                        documents=[(doc_id, title) for doc_id, title in documents])


def _question_items(ids: list[int], metric: str, profile: str) -> list[QuestionValue]:
    if not ids:
        return []
    results: dict[int, dict[str, float]] = {}
    for pid, name, value in db.session.execute(select(MetricResult.prediction_id, MetricResult.metric, MetricResult.value)
                                               .where(MetricResult.prediction_id.in_(ids), MetricResult.profile == profile)):
        results.setdefault(pid, {})[name] = value
    rows = {p.id: (p, q, d) for p, q, d in db.session.execute(
        select(Prediction, Question, Document).join(Question, Prediction.question_id == Question.id)
        .join(Document, Question.document_id == Document.id).where(Prediction.id.in_(ids))
    )}
    files = dict(db.session.execute(select(PredictionFile.id, PredictionFile.filename).where(
        PredictionFile.id.in_({p.file_id for p, _, _ in rows.values() if p.file_id is not None}))).all())
    question_ids = [rows[pid][1].id for pid in ids]
    extra_refs: dict[int, list[Reference]] = {}
    for ref in db.session.scalars(select(Reference).where(Reference.question_id.in_(question_ids)).order_by(Reference.id)):
        extra_refs.setdefault(ref.question_id, []).append(ref)
    items = []
    for pid in ids:
        prediction, question, document = rows[pid]
        values = results.get(pid, {})
        value = values.get(ITEM_KEYS.get(metric, metric), 0.0)
        if metric == "delta_words":
            value = values.get("pred_words", 0.0) - values.get("ref_words", 0.0)
        references = [("Reference used for scoring (gt)", question.reference)]
        references += [(ref.label, ref.text) for ref in extra_refs.get(question.id, []) if ref.text != question.reference]
        others = {k: v for k, v in values.items() if k in METRIC_KEYS or k in ("pred_words", "ref_words")}
        items.append(QuestionValue(
            task=HUMAN_EVAL_BUCKET if document.collection == HUMAN_EVAL else document.task,
            document_title=document.title, file=files.get(prediction.file_id, ""), line_no=prediction.line_no, question=question.instruction,
            prediction=prediction.text, value=value, others=others, references=references,
        ))
    return items
