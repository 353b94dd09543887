"""Summaries of human 1-5 scores: per-system means with bootstrap intervals, distributions, breakdowns."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from app.core.stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    canonical_resample_weights,
    percentile_interval,
)
from app.core.stats.records import (
    SCORE_VALUES,
    clean,
    index_of,
    question_key,
    score_of,
)


@dataclass(frozen=True)
class SystemSummary:
    """Mean human score of one system with its bootstrap interval and 1-5 distribution."""

    system: str
    n_scores: int
    n_questions: int
    mean: float
    ci_low: float | None
    ci_high: float | None
    distribution: tuple[int, int, int, int, int]

    @property
    def proportions(self) -> tuple[float, ...]:
        """Return the share of each score 1..5."""
        return tuple(count / self.n_scores for count in self.distribution)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        data = asdict(self)
        data["distribution"] = dict(zip(SCORE_VALUES, self.distribution))
        data["ci_low"], data["ci_high"] = clean(self.ci_low), clean(self.ci_high)
        return data


@dataclass(frozen=True)
class BreakdownRow:
    """Mean human score of one system within one group (a task, a source or an annotator)."""

    system: str
    group: str
    n_scores: int
    mean: float
    std: float

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return asdict(self)


def only_annotators(
    records: Iterable[Mapping[str, Any]], annotators: Collection[str]
) -> list[Mapping[str, Any]]:
    """Keep the scores of the given annotators, e.g. those who finished, for the 'finished' view."""
    wanted = set(annotators)
    return [record for record in records if record["annotator"] in wanted]


def summarize_systems(
    records: Iterable[Mapping[str, Any]],
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> list[SystemSummary]:
    """Summarise each system's scores, best mean first.

    The interval resamples questions, not single scores: several annotators
    scoring the same answer are not independent, and treating them as such
    would make the interval too narrow.
    """
    rows = list(records)
    if not rows:
        return []
    scores = np.array([score_of(record) for record in rows], dtype=np.float64)
    system_index = index_of(record["system"] for record in rows)
    question_index = index_of(question_key(record) for record in rows)
    system_ids = np.array([system_index[record["system"]] for record in rows])
    question_ids = np.array([question_index[question_key(record)] for record in rows])

    shape = (len(system_index), len(question_index))
    score_sums = np.zeros(shape)
    score_counts = np.zeros(shape)
    np.add.at(score_sums, (system_ids, question_ids), scores)
    np.add.at(score_counts, (system_ids, question_ids), 1.0)

    distribution = np.zeros((len(system_index), len(SCORE_VALUES)), dtype=np.int64)
    np.add.at(distribution, (system_ids, scores.astype(np.int64) - 1), 1)

    # A resample's mean is (picked sums) / (picked counts), so one matrix product
    # per quantity gives every resample of every system at once. A question is its sums and counts:
    # resampled in their canonical order, the interval does not depend on the questions' ids.
    order, weights = canonical_resample_weights(np.hstack([score_sums.T, score_counts.T]), n_resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        resampled_means = (weights @ score_sums[:, order].T) / (weights @ score_counts[:, order].T)
    ci_low, ci_high = percentile_interval(resampled_means, confidence)

    totals = score_sums.sum(axis=1)
    counts = score_counts.sum(axis=1)
    summaries = [
        SystemSummary(
            system=system,
            n_scores=int(counts[position]),
            n_questions=int((score_counts[position] > 0).sum()),
            mean=float(totals[position] / counts[position]),
            ci_low=clean(ci_low[position]),
            ci_high=clean(ci_high[position]),
            distribution=tuple(int(count) for count in distribution[position]),  # type: ignore[arg-type]
        )
        for system, position in system_index.items()
    ]
    return sorted(summaries, key=lambda summary: (-summary.mean, summary.system))


def system_means(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Return each system's mean human score, the input of the metric correlations."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for record in records:
        system = record["system"]
        sums[system] = sums.get(system, 0.0) + score_of(record)
        counts[system] = counts.get(system, 0) + 1
    return {system: sums[system] / counts[system] for system in sorted(sums)}


def item_means(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], float]:
    """Return the mean human score of each (system, document_id, question_id) prediction."""
    sums: dict[tuple[str, str, str], float] = {}
    counts: dict[tuple[str, str, str], int] = {}
    for record in records:
        key = (str(record["system"]), *question_key(record))
        sums[key] = sums.get(key, 0.0) + score_of(record)
        counts[key] = counts.get(key, 0) + 1
    return {key: sums[key] / counts[key] for key in sorted(sums)}


def breakdown(records: Iterable[Mapping[str, Any]], by: str) -> list[BreakdownRow]:
    """Break each system's mean down by a record field such as 'task', 'source' or 'annotator'."""
    groups: dict[tuple[str, str], list[int]] = {}
    for record in records:
        key = (str(record["system"]), str(record.get(by, "")))
        groups.setdefault(key, []).append(score_of(record))
    rows = []
    for (system, group), scores in sorted(groups.items()):
        # Sorted: the same scores give the same bits whatever order the database returns them in.
        values = np.sort(np.asarray(scores, dtype=np.float64))
        rows.append(
            BreakdownRow(
                system=system,
                group=group,
                n_scores=len(values),
                mean=float(values.mean()),
                # Population std: the group is all the scores there are, not a sample of a group.
                std=float(values.std()),
            )
        )
    return rows
