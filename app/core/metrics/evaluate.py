"""Per-row scoring, per-file aggregation and prediction-file reading."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Sequence

from app.core.metrics.exam import exam_item, task_kind
from app.core.metrics.files import describe_file, is_lveval_row, prediction_key, read_rows
from app.core.metrics.f1 import best_f1
from app.core.metrics.length import length_item, length_summary
from app.core.metrics.lveval import LVEVAL_DATASETS, ROUGE_DATASETS, dataset_name, dataset_settings, keyword_f1
from app.core.metrics.lveval.rows import score_row
from app.core.metrics.lveval.table import file_score
from app.core.metrics.profiles import OFFICIAL, resolve_profile
from app.core.metrics.rouge import best_rouge, geometric_mean
from app.core.metrics.selection import LVEVAL_EVALUATION, plan_file

# File-level metric keys, in display order.
METRIC_KEYS = ("exact_match", "f1", "rouge1", "rouge2", "rougeL", "rouge_geo", "keyword_f1",
               "avg_words", "delta_words", "lveval")
# The `evaluation` values a row may carry, mapped to the metric groups they get.
EVALUATIONS = {
    "exam": ("exam",),
    "f1": ("f1",),
    "rouge": ("rouge",),
    "human": ("f1", "rouge"),  # for the metric-versus-human analysis
    "llm": ("f1", "rouge"),
    LVEVAL_EVALUATION: ("keyword_f1",),
}


def _evaluation_key(evaluation: str) -> str:
    key = evaluation.strip().lower()
    if key not in EVALUATIONS:
        raise ValueError(f"unknown evaluation {evaluation!r}; expected one of {sorted(EVALUATIONS)}")
    return key


def _keyword_item(task: str, prediction: str, refs: list[str], extra: dict, profile: str) -> dict[str, float]:
    if dataset_name(task) in LVEVAL_DATASETS:
        # One of LV-Eval's datasets: score the row exactly as its evaluation.py does (or as fixed).
        scored = score_row(task, prediction, extra.get("answers", refs), extra.get("gold_ans"), profile=profile)
        item = {"lveval_raw": scored.value}
        if dataset_name(task) not in ROUGE_DATASETS:
            item["keyword_f1"] = 100.0 * scored.value
        return item
    if not refs:
        raise ValueError("keyword F1 needs an answer")
    language, gated = dataset_settings(task, refs[0])
    language = extra.get("language", language)
    # LV-Eval scores the first answer only.
    score = keyword_f1(prediction, refs[0], extra.get("gold_ans"), language=language, profile=profile, gated=gated)
    return {"keyword_f1": 100.0 * score}


def score_item(task: str, evaluation: str, prediction: str, references: Sequence[str] | str, *,
               profile: str = OFFICIAL, index: int | None = None, extra: dict | None = None) -> dict[str, float]:
    """Score one row with every metric its evaluation calls for, on the 0-100 scale.

    ``index`` is the row's position in its file (topic_retrieval_longchat groups rows by
    index mod 3).  ``extra`` carries LV-Eval's ``gold_ans`` and may force ``language``.
    """
    profile = resolve_profile(profile)
    prediction = "" if prediction is None else str(prediction)
    refs = [references] if isinstance(references, str) else [str(r) for r in references]
    item: dict[str, float] = {}
    for group in EVALUATIONS[_evaluation_key(evaluation)]:
        if group == "exam":
            item.update(exam_item(task, prediction, refs, profile, index))
        elif group == "f1":
            item["f1"] = best_f1(prediction, refs, profile)
        elif group == "rouge":
            scores = best_rouge(prediction, refs, profile)
            item.update(scores)
            item["rouge_geo"] = geometric_mean(scores["rouge1"], scores["rouge2"], scores["rougeL"])
        elif group == "keyword_f1":
            item.update(_keyword_item(task, prediction, refs, extra or {}, profile))
    item.update(length_item(prediction, refs, profile))
    return item


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _exact_match(task: str, items: list[dict[str, float]], profile: str) -> float | None:
    scored = [item for item in items if "exact_match" in item]
    if not scored:
        return None
    kind = task_kind(task)
    official = profile == OFFICIAL
    # Upstream rounds each part to 4 decimals before averaging the parts.
    settle = (lambda value: round(value, 4)) if official else (lambda value: value)
    if kind == "topic":
        groups: dict[int, list[float]] = {}
        for position, item in enumerate(scored):
            group = int(item.get("group", position % 3))
            groups.setdefault(group, []).append(item["exact_match"])
        return _mean([settle(_mean(groups[g])) for g in sorted(groups)])
    if kind == "judge" and all("loyalty" in item and "fact" in item for item in scored):
        loyalty = settle(_mean([item["loyalty"] for item in scored]))
        fact = settle(_mean([item["fact"] for item in scored]))
        return (loyalty + fact) / 2
    return _mean([item["exact_match"] for item in scored])


def aggregate(task: str, items: Sequence[dict[str, float]], *, profile: str = OFFICIAL) -> dict[str, float]:
    """Combine per-row items into file-level metrics exactly as the reference scripts do, rounded to 4 decimals."""
    profile = resolve_profile(profile)
    items = list(items)
    metrics: dict[str, float] = {}
    exact_match = _exact_match(task, items, profile)
    if exact_match is not None:
        metrics["exact_match"] = exact_match
    lveval_rows = [item["lveval_raw"] for item in items if "lveval_raw" in item]
    if lveval_rows:
        metrics["lveval"] = file_score(lveval_rows)  # LV-Eval's result.json number, rounded its way
    for key in ("f1", "rouge1", "rouge2", "rougeL", "keyword_f1"):
        values = [item[key] for item in items if key in item]
        if values:
            metrics[key] = _mean(values)
    if all(key in metrics for key in ("rouge1", "rouge2", "rougeL")):
        # L-Eval's summary is the geometric mean of the averages, not the average of per-row means.
        metrics["rouge_geo"] = geometric_mean(metrics["rouge1"], metrics["rouge2"], metrics["rougeL"])
    metrics.update(length_summary(items))
    return {key: round(metrics[key], 4) for key in METRIC_KEYS if key in metrics}


# --- rows and files ---------------------------------------------------------------


def _prediction_key(row: dict, preferred: str | None) -> str | None:
    if preferred is not None and preferred in row:
        return preferred
    return prediction_key(row)


def row_to_case(row: dict, position: int, preferred_key: str | None = None,
                evaluation_override: str | None = None) -> dict[str, Any]:
    """Turn one file row into {evaluation, prediction, references, extra}; the evaluation as the row spells it."""
    if not isinstance(row, dict):
        raise ValueError(f"row {position}: expected a JSON object")
    if is_lveval_row(row):
        answers = row["answers"]
        references = [answers] if isinstance(answers, str) else list(answers)
        return {"evaluation": evaluation_override or LVEVAL_EVALUATION, "prediction": row["pred"],
                "references": references[:1], "extra": {"gold_ans": row.get("gold_ans"), "answers": answers}}
    key = _prediction_key(row, preferred_key)
    if key is None or "gt" not in row:
        raise ValueError(f"row {position}: neither an L-Eval row (gt, <model>_pred) nor an LV-Eval row (answers, pred)")
    gt = row["gt"]
    return {"evaluation": evaluation_override or row.get("evaluation"), "prediction": row[key],
            "references": [gt] if isinstance(gt, str) else list(gt), "extra": {}}


def known_evaluation(evaluation: object) -> bool:
    """Tell whether score_item can score a row with this evaluation (any spelling)."""
    return isinstance(evaluation, str) and evaluation.strip().lower() in EVALUATIONS


def _score_case(task: str, evaluation: str, case: dict, profile: str, position: int) -> dict[str, float]:
    return score_item(task, evaluation, case["prediction"], case["references"], profile=profile, index=position,
                      extra=case["extra"])


def evaluate_rows(rows: Iterable[dict], *, task: str, system: str | None = None, profile: str = OFFICIAL,
                  evaluation_override: str | None = None, name: str = "the file",
                  refuse: bool = True) -> dict[str, Any]:
    """Score the rows of one prediction file as the reference script does.

    Returns {task, system, profile, n, skipped, evaluation, metrics, analysis}: `metrics` over the
    rows that count (selection.plan_file: auto_eval.py's rule under `official`), `analysis` =
    {n, metrics} over every row scored by its own evaluation (LLM and human rows included), which
    is never L-Eval's number. Raises selection.NothingCounted for a file in which no row counts,
    unless not `refuse` (then `metrics` is empty and only `analysis` has numbers).
    """
    profile = resolve_profile(profile)
    if evaluation_override is not None:
        _evaluation_key(evaluation_override)
    rows = list(rows)
    # Upstream reads the prediction key off the first row.
    preferred_key = _prediction_key(rows[0], None) if rows and isinstance(rows[0], dict) else None
    cases = [row_to_case(row, position, preferred_key, evaluation_override) for position, row in enumerate(rows)]
    plan = plan_file([case["evaluation"] for case in cases], profile, override=evaluation_override, name=name,
                     refuse=refuse)
    scored: dict[tuple[int, str], dict[str, float]] = {}

    def item(position: int, evaluation: str) -> dict[str, float]:
        # A counted row is usually scored with its own evaluation: score it once for both scopes.
        key = (position, evaluation.strip().lower())
        if key not in scored:
            scored[key] = _score_case(task, evaluation, cases[position], profile, position)
        return scored[key]

    counted = [item(i, plan.counted[i]) for i in sorted(plan.counted)]
    every_row = [item(i, case["evaluation"]) for i, case in enumerate(cases) if known_evaluation(case["evaluation"])]
    return {"task": task, "system": system, "profile": profile, "n": plan.n, "skipped": len(rows) - plan.n,
            "evaluation": plan.file_evaluation, "metrics": aggregate(task, counted, profile=profile),
            "analysis": {"n": len(every_row), "metrics": aggregate(task, every_row, profile=profile)}}


def evaluate_file(path: str | Path, *, profile: str = OFFICIAL, task: str | None = None,
                  system: str | None = None, evaluation_override: str | None = None,
                  refuse: bool = True) -> dict[str, Any]:
    """Score one prediction file; returns {file, **evaluate_rows(...)}."""
    rows = read_rows(path)
    if not rows:
        raise ValueError(f"{path}: no rows")
    guessed_task, guessed_system = describe_file(path, rows)
    result = evaluate_rows(rows, task=task or guessed_task, system=system or guessed_system, profile=profile,
                           evaluation_override=evaluation_override, name=str(path), refuse=refuse)
    return {"file": str(path), **result}
