"""Score a system's stored predictions with app.core.metrics: per-question results, then per-task aggregates.

Per-question values are written in batches (delete then insert: an upsert in portable SQL),
each batch committed together with the job's progress. A resumed job skips every prediction
that already has results from the same job, and aggregates are always computed from the
stored values, so a resumed run gives exactly the numbers of an uninterrupted one.

Each task is aggregated as the reference script aggregates its file (app.core.metrics.selection):
under `official` only the rows whose evaluation is exactly f1/rouge/exam count, all with the
metric of the last one. Every other row (LLM and human rows) is still scored by its own
evaluation, for the metric-versus-human analysis, and stored with scope `analysis`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from sqlalchemy import delete, func, insert, select

from app.core.metrics import PROFILES, aggregate, score_item
from app.core.metrics.evaluate import EVALUATIONS
from app.core.metrics.length import length_summary
from app.core.metrics.selection import SCOPE_ANALYSIS, SCOPE_COUNTED, plan_file
from app.extensions import db
from app.models import Document, MetricAggregate, MetricResult, Prediction, Question
from app.models.base import utcnow
from app.models.corpus import HUMAN_EVAL
from app.services.benchmarks import PLUGINS, plugin_collections

# The row that averages a system's tasks (as L-Eval's leaderboard does).
OVERALL = "*"
# Human-eval predictions are aggregated apart from the task files: they feed the metric-versus-human
# analysis, and L-Eval's leaderboard averages the task files only.
HUMAN_EVAL_BUCKET = "human_eval"
# Per-task scores averaged (unweighted, as L-Eval's leaderboard does) into the '*' row.
AVERAGED_METRICS = ("exact_match", "f1", "rouge1", "rouge2", "rougeL", "rouge_geo", "keyword_f1")
BATCH_ITEMS = 50
BATCH_SECONDS = 1.0

Report = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Case:
    """One stored prediction, ready for score_item."""

    prediction_id: int
    question_id: int
    bucket: str
    task: str
    evaluation: str | None  # the one it is scored by for the analysis (any known spelling), None: unscorable
    text: str
    reference: str
    index: int
    row_evaluation: object = None  # as the row spells it: selection decides whether it counts


def bucket_for(collection: str, task: str) -> str:
    return HUMAN_EVAL_BUCKET if collection == HUMAN_EVAL else task


def choose_evaluation(*candidates: str | None) -> str | None:
    """Return the first candidate app.core.metrics knows (override, the row's, the question's), or None."""
    for candidate in candidates:
        if candidate and candidate.strip().lower() in EVALUATIONS:
            return candidate
    return None


def load_cases(system_id: int, *, evaluation: str | None = None) -> list[Case]:
    """Return the system's predictions in a stable order (task, file, file line)."""
    stmt = (
        select(Prediction.id, Prediction.question_id, Prediction.text, Prediction.evaluation, Prediction.line_no,
               Question.evaluation, Question.reference, Document.task, Document.collection)
        .join(Question, Prediction.question_id == Question.id)
        .join(Document, Question.document_id == Document.id)
        # The other benchmarks' questions are scored by their own plugins (services.benchmarks).
        .where(Prediction.system_id == system_id, Document.collection.not_in(plugin_collections()))
        .order_by(Document.collection, Document.task, Prediction.file_id, Prediction.line_no, Prediction.id)
    )
    return [
        Case(prediction_id=pid, question_id=qid, bucket=bucket_for(collection, task), task=task,
             evaluation=choose_evaluation(evaluation, row_eval, question_eval), text=text, reference=reference,
             # topic_retrieval_longchat groups rows by their position in the file; lines count from 1.
             index=max(line_no - 1, 0),
             # A row imported without `evaluation` takes its document's.
             row_evaluation=evaluation or row_eval or question_eval)
        for pid, qid, text, row_eval, line_no, question_eval, reference, task, collection in db.session.execute(stmt)
    ]


def counted_evaluations(cases: Sequence[Case], profile: str, override: str | None = None) -> dict[int, str]:
    """{prediction id: evaluation it counts with} for the rows each bucket's score counts (selection.plan_file)."""
    by_bucket: dict[str, list[Case]] = {}
    for case in cases:
        by_bucket.setdefault(case.bucket, []).append(case)
    counted: dict[int, str] = {}
    for group in by_bucket.values():
        plan = plan_file([case.row_evaluation for case in group], profile, override=override, refuse=False)
        counted.update({group[i].prediction_id: evaluation for i, evaluation in plan.counted.items()})
    return counted


def _score(case: Case, evaluation: str, profile: str) -> dict[str, float]:
    try:
        return score_item(case.task, evaluation, case.text, [case.reference], profile=profile, index=case.index)
    except ValueError:
        return {}  # e.g. keyword F1 without an answer: the item is left unscored, like a skipped row


def score_case(case: Case, profile: str, counted_as: str | None = None) -> dict[str, tuple[float, str]]:
    """{metric: (value, scope)}: the row's own evaluation's values (scope analysis), and, when the row
    counts, the values of the evaluation it counts with (scope counted), which win where both give a key."""
    own = _score(case, case.evaluation, profile) if case.evaluation is not None else {}
    values = {metric: (value, SCOPE_ANALYSIS) for metric, value in own.items()}
    if counted_as is not None:
        same = case.evaluation is not None and case.evaluation.strip().lower() == counted_as.strip().lower()
        counted = own if same else _score(case, counted_as, profile)
        values.update({metric: (value, SCOPE_COUNTED) for metric, value in counted.items()})
    return values


def finished_predictions(system_id: int, job_id: int) -> set[int]:
    """Predictions this job already scored (a batch is committed whole, so one row means all of them)."""
    stmt = select(MetricResult.prediction_id).where(
        MetricResult.system_id == system_id, MetricResult.job_id == job_id
    ).distinct()
    return set(db.session.scalars(stmt))


def _commit(done: int, total: int, message: str) -> None:
    db.session.commit()


def score_system(
    system_id: int, *, profiles: Iterable[str] = PROFILES, job_id: int | None = None, evaluation: str | None = None,
    report: Report | None = None, check_cancelled: Callable[[], None] | None = None, item_delay: float = 0.0,
) -> dict:
    """Score every stored prediction of a system and store per-task and '*' aggregates.

    `report(done, total, message)` must commit (JobContext.progress does); `check_cancelled`
    raises to stop between batches. With a `job_id`, predictions that job already scored are skipped.
    """
    profiles = tuple(profiles)
    report = report or _commit
    cases = load_cases(system_id, evaluation=evaluation)
    counted = {profile: counted_evaluations(cases, profile, evaluation) for profile in profiles}
    # The job's units are predictions, the other benchmarks' included (scored after the rest), so a job of an
    # LV-Eval model counts its rows instead of showing "0 / 0".
    total = len(cases) + sum(p.prediction_count(system_id) for p in PLUGINS)
    finished = finished_predictions(system_id, job_id) if job_id is not None else set()
    done = sum(1 for case in cases if case.prediction_id in finished)
    pending = [case for case in cases if case.prediction_id not in finished]
    report(done, total, f"{done} of {total} predictions scored" + (" (resumed)" if done else ""))
    batch: list[Case] = []
    started = time.monotonic()
    for case in pending:
        if check_cancelled:
            check_cancelled()
        if item_delay:
            time.sleep(item_delay)
        batch.append(case)
        if len(batch) >= BATCH_ITEMS or time.monotonic() - started >= BATCH_SECONDS:
            done += _store_batch(system_id, batch, counted, job_id)
            report(done, total, f"{done} of {total} predictions scored")
            batch, started = [], time.monotonic()
    if batch:
        done += _store_batch(system_id, batch, counted, job_id)
    aggregates = store_aggregates(system_id, cases, profiles, job_id, counted)
    # The other benchmarks' rows are scored and tabled their own way, after (store_aggregates clears the system's
    # aggregates): each returns its rows' count (`<key>_rows`) and its table's entries.
    plugins: dict = {}
    messages = []
    for plugin in PLUGINS:
        result, message = plugin.score_system(system_id, profiles=profiles, job_id=job_id,
                                               check_cancelled=check_cancelled)
        done += result[f"{plugin.key}_rows"]
        plugins.update(result)
        messages += [message] if message else []
    total = max(total, done)  # rows added while the job ran are scored too
    skipped = sum(1 for case in cases if case.evaluation is None)
    uncounted = {profile: len(cases) - len(counted[profile]) for profile in profiles}
    report(done, total, "; ".join([f"{total} predictions scored; {len(aggregates)} aggregates stored", *messages]))
    return {
        "system_id": system_id, "predictions": total, "unscored": skipped, "profiles": list(profiles),
        "not_counted": uncounted,
        "tasks": sorted({case.bucket for case in cases}), "resumed_from": len(finished), **plugins,
    }


def _store_batch(system_id: int, cases: Sequence[Case], counted: dict[str, dict[int, str]],
                 job_id: int | None) -> int:
    now = utcnow()
    profiles = tuple(counted)
    rows = [
        {"prediction_id": case.prediction_id, "system_id": system_id, "question_id": case.question_id,
         "metric": metric, "profile": profile, "scope": scope, "value": float(value), "job_id": job_id,
         "computed_at": now}
        for case in cases for profile in profiles
        for metric, (value, scope) in score_case(case, profile, counted[profile].get(case.prediction_id)).items()
    ]
    ids = [case.prediction_id for case in cases]
    db.session.execute(delete(MetricResult).where(MetricResult.prediction_id.in_(ids), MetricResult.profile.in_(profiles)))
    if rows:
        db.session.execute(insert(MetricResult), rows)
    return len(cases)


def stored_items(system_id: int, profile: str, scope: str | None = None) -> dict[int, dict[str, float]]:
    """The stored per-question values of a system under one profile (and scope), by prediction id."""
    items: dict[int, dict[str, float]] = {}
    stmt = select(MetricResult.prediction_id, MetricResult.metric, MetricResult.value).where(
        MetricResult.system_id == system_id, MetricResult.profile == profile
    )
    if scope is not None:
        stmt = stmt.where(MetricResult.scope == scope)
    for prediction_id, metric, value in db.session.execute(stmt):
        items.setdefault(prediction_id, {})[metric] = value
    return items


def compute_aggregates(cases: Sequence[Case], items: dict[int, dict[str, float]], profile: str,
                       analysis: dict[int, dict[str, float]] | None = None) -> list[dict]:
    """Aggregate stored items per bucket (as the reference scripts do per file), then the '*' row.

    `items` are the counted values; the human-eval bucket, which no task file holds, is
    aggregated from `analysis` (every row by its own evaluation) when given.
    """
    by_bucket: dict[str, list[dict[str, float]]] = {}
    task_of: dict[str, str] = {}
    for case in cases:
        source = analysis if analysis is not None and case.bucket == HUMAN_EVAL_BUCKET else items
        item = source.get(case.prediction_id)
        if item:
            by_bucket.setdefault(case.bucket, []).append(item)
            task_of.setdefault(case.bucket, case.task)
    rows = []
    per_bucket: dict[str, dict[str, tuple[float, int]]] = {}
    for bucket, bucket_items in by_bucket.items():
        values = aggregate(task_of[bucket], bucket_items, profile=profile)
        per_bucket[bucket] = {metric: (value, _count(metric, bucket_items)) for metric, value in values.items()}
        rows += [{"task": bucket, "metric": m, "value": v, "n": n} for m, (v, n) in per_bucket[bucket].items()]
    if analysis is not None:  # length covers every answer, counted or not
        everything = [analysis[case.prediction_id] for case in cases if case.prediction_id in analysis]
    else:
        everything = [item for bucket_items in by_bucket.values() for item in bucket_items]
    rows += _overall(per_bucket, everything)
    return rows


def _count(metric: str, items: Sequence[dict[str, float]]) -> int:
    """How many items a file-level metric was computed from."""
    needs = {"avg_words": ("pred_words",), "delta_words": ("pred_words", "ref_words"),
             "rouge_geo": ("rouge1", "rouge2", "rougeL")}.get(metric, (metric,))
    return sum(1 for item in items if all(key in item for key in needs))


def _overall(per_bucket: dict[str, dict[str, tuple[float, int]]], all_items: list[dict[str, float]]) -> list[dict]:
    rows = []
    for metric in AVERAGED_METRICS:
        parts = [values[metric] for bucket, values in per_bucket.items() if bucket != HUMAN_EVAL_BUCKET and metric in values]
        if parts:
            rows.append({"task": OVERALL, "metric": metric, "value": round(sum(v for v, _ in parts) / len(parts), 4),
                         "n": sum(n for _, n in parts)})
    # Length is a property of all of a system's answers, human-eval subset included.
    for metric, value in length_summary(all_items).items():
        rows.append({"task": OVERALL, "metric": metric, "value": round(value, 4), "n": _count(metric, all_items)})
    return rows


def store_aggregates(system_id: int, cases: Sequence[Case], profiles: Sequence[str], job_id: int | None,
                     counted: dict[str, dict[int, str]] | None = None) -> list[dict]:
    """Replace the system's aggregates for these profiles with fresh ones from the stored counted values."""
    now = utcnow()
    rows = []
    for profile in profiles:
        stored = stored_items(system_id, profile, SCOPE_COUNTED)
        if counted is not None:  # only what this run counts, should an older run have left other rows
            stored = {pid: item for pid, item in stored.items() if pid in counted[profile]}
        every_row = stored_items(system_id, profile)
        for row in compute_aggregates(cases, stored, profile, every_row):
            rows.append({**row, "system_id": system_id, "profile": profile, "job_id": job_id, "computed_at": now})
    db.session.execute(delete(MetricAggregate).where(
        MetricAggregate.system_id == system_id, MetricAggregate.profile.in_(profiles)
    ))
    if rows:
        db.session.execute(insert(MetricAggregate), rows)
    return rows


def prediction_count(system_id: int) -> int:
    return db.session.scalar(select(func.count()).select_from(Prediction).where(Prediction.system_id == system_id)) or 0
