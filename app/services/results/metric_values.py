"""Automatic metric values per system and per answer over the answers a study shows.

A system's value for a metric is the mean of its per-question values over the study's
questions, per profile (official or fixed), so that it is measured on exactly the answers the
humans scored. Metric values describe a prediction's current text: an answer the study pinned at
an older version has none (a metric never stands beside text it was not computed for).
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from app.core.benchmarks.registry import human_metrics
from app.core.metrics.profiles import PROFILES
from app.core.text import word_count
from app.extensions import db
from app.models import (
    Answer,
    Document,
    MetricResult,
    Prediction,
    Question,
    StudyQuestion,
    System,
)
from app.services.studies.membership import shown_answers

# Every benchmark's per-answer measures compared with human judgement (app.core.benchmarks), L-Eval's first in the
# order its figure shows them.
AUTOMATIC_METRICS = tuple((metric.key, metric.label) for metric in human_metrics())
MISSING_NOTES = {metric.key: metric.missing_note for metric in human_metrics() if metric.missing_note}
LENGTH_KEY = "length"
LENGTH_LABEL = "−|ΔL| (words)"
PROFILE_LABELS = {"official": "official (L-Eval's scripts, quirks kept)", "fixed": "fixed (quirks corrected)"}

ItemKey = tuple[str, str, str]


@dataclass(frozen=True)
class MetricColumn:
    """One automatic measure, with its value for each system (higher is better)."""

    key: str
    label: str
    source: str  # "metric", "judge", "rater" or "length"
    profile: str | None
    values: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label, "source": self.source, "profile": self.profile,
                "values": dict(self.values)}


def missing_reason(column: MetricColumn, columns: list[MetricColumn]) -> str:
    """Say why a measure has no value for any system of the study."""
    computed = any(c.values for c in columns if c.source == "metric")
    if column.key in MISSING_NOTES and computed:
        # F1 is computed for every answer; a benchmark's own measure only on its own questions.
        return MISSING_NOTES[column.key]
    if column.source == "metric":
        return "not computed yet: run the metric jobs (Jobs page, or `python run.py score-metrics`)"
    return "no values yet"


def _current_text(stmt):
    """Keep the answers whose pinned text is still the prediction's text (what the metrics were computed on)."""
    return stmt.join(Prediction, Prediction.id == Answer.prediction_id).where(Prediction.text_sha256 == Answer.sha256)


def metric_means(study_id: int, profile: str) -> dict[str, dict[str, float]]:
    """Return {metric: {system: mean per-question value}} for one profile."""
    keys = [key for key, _ in AUTOMATIC_METRICS]
    stmt = (
        _current_text(shown_answers(study_id, MetricResult.metric, System.name, func.avg(MetricResult.value)))
        .join(MetricResult, MetricResult.prediction_id == Prediction.id)
        .where(MetricResult.profile == profile, MetricResult.metric.in_(keys))
        .group_by(MetricResult.metric, System.name)
    )
    means: dict[str, dict[str, float]] = defaultdict(dict)
    for metric, system, mean in db.session.execute(stmt):
        if mean is not None and math.isfinite(mean):
            means[metric][system] = float(mean)
    return means


def _reference_word_counts(study_id: int) -> dict[int, int]:
    stmt = (select(Question.id, Question.reference).join(StudyQuestion, StudyQuestion.question_id == Question.id)
            .where(StudyQuestion.study_id == study_id))
    return {question_id: word_count(text) for question_id, text in db.session.execute(stmt)}


def _answer_lengths(study_id: int) -> list[tuple[str, int, int, int]]:
    """Return (system, document id, question id, answer words) for every answer the study shows."""
    stmt = shown_answers(study_id, System.name, Document.id, Question.id, Answer.word_count)
    return [tuple(row) for row in db.session.execute(stmt)]  # type: ignore[misc]


def length_deltas(study_id: int) -> dict[str, float]:
    """Return −|ΔL| per system: ΔL is mean answer length minus mean human reference length, in words."""
    from app.core.stats.correlation import negative_abs_delta_from_counts

    references = _reference_word_counts(study_id)
    counts: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for system, _, question_id, words in _answer_lengths(study_id):
        counts[system].append((words, references.get(question_id, 0)))
    return negative_abs_delta_from_counts(dict(sorted(counts.items())))


def item_values(study_id: int, column_key: str, profile: str) -> dict[ItemKey, float]:
    """Return one measure per answer, keyed (system, document id, question id), for the disagreement view."""
    if column_key == LENGTH_KEY:
        references = _reference_word_counts(study_id)
        return {
            (system, str(document_id), str(question_id)): -abs(words - references.get(question_id, 0))
            for system, document_id, question_id, words in _answer_lengths(study_id)
        }
    if column_key.startswith("rater:"):
        from app.services.rater.reports import all_study_ratings

        for ratings in all_study_ratings(study_id):
            if ratings.key == column_key:
                return {key: float(score) for key, score in ratings.scores.items()}
        return {}
    stmt = (
        _current_text(shown_answers(study_id, System.name, Document.id, Question.id, MetricResult.value))
        .join(MetricResult, MetricResult.prediction_id == Prediction.id)
        .where(MetricResult.profile == profile, MetricResult.metric == column_key)
    )
    return {
        (system, str(document_id), str(question_id)): float(value)
        for system, document_id, question_id, value in db.session.execute(stmt)
        if value is not None and math.isfinite(value)
    }


def judge_columns(win_rates: dict[str, list[dict[str, Any]]]) -> list[MetricColumn]:
    """Turn {system: [{judge_model, profile, prompt_version, win_rate, …}]} into one column per judge set-up."""
    columns: dict[tuple[str, str, str, str], dict[str, float]] = {}
    notes: dict[tuple[str, str, str, str], str] = {}
    for system, entries in sorted(win_rates.items()):
        for entry in entries:
            value = entry.get("win_rate")
            if value is None or not math.isfinite(float(value)):
                continue
            setup = (str(entry.get("judge_model", "judge")), str(entry.get("prompt_version", "")),
                     str(entry.get("baseline", "") or ""), str(entry.get("profile", "default")))
            columns.setdefault(setup, {})[system] = float(value)
            if entry.get("flagged_note"):
                notes[setup] = entry["flagged_note"]
    result = []
    for setup, values in sorted(columns.items()):
        model, version, baseline, profile = setup
        label = (f"Judge {model} ({profile} profile" + (f", prompt v{version}" if version else "")
                 + (f", {notes[setup]}" if setup in notes else "") + ")" + (f" vs {baseline}" if baseline else ""))
        # Runs from before profiles were the default profile: their keys stay as they were.
        key = "judge:" + "|".join((model, version, baseline) + ((profile,) if profile != "default" else ()))
        result.append(MetricColumn(key, label + " win %", "judge", profile, values))
    return result


def rater_metric_columns(study_id: int) -> list[MetricColumn]:
    """The LLM rater's mean rating per system, one column per rater run (a non-human rater, like a metric)."""
    from app.services.rater.reports import rater_columns

    return [MetricColumn(c["key"], c["label"], "rater", None, c["values"]) for c in rater_columns(study_id)]


def metric_columns(study_id: int, profile: str,
                   win_rates: dict[str, list[dict[str, Any]]] | None = None) -> list[MetricColumn]:
    """Return every measure compared with humans: automatic metrics, judges, LLM raters, then −|ΔL|."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, not {profile!r}")
    means = metric_means(study_id, profile)
    columns = [MetricColumn(key, label, "metric", profile, means.get(key, {})) for key, label in AUTOMATIC_METRICS]
    columns += judge_columns(win_rates or {})
    columns += rater_metric_columns(study_id)
    columns.append(MetricColumn(LENGTH_KEY, LENGTH_LABEL, "length", None, length_deltas(study_id)))
    return columns
