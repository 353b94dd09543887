"""Automatic metrics against human scores: Kendall tau-b, rank table, disagreements, -|ΔL|."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from app.core.stats.kendall import kendall_tau_b, rankdata
from app.core.stats.records import clean
from app.core.text import word_count

MIN_SYSTEMS_FOR_TRUST = 7
# A measure that covers fewer systems than this ranks nothing: one system is "rank 1" of itself.
MIN_SYSTEMS_TO_RANK = 2
SIGNIFICANCE_LEVEL = 0.05


@dataclass(frozen=True)
class CorrelationRow:
    """Kendall tau-b between one metric and the mean human score, over systems."""

    metric: str
    tau: float | None
    p_value: float | None
    n: int
    systems: tuple[str, ...]
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        data = asdict(self)
        data["systems"], data["warnings"] = list(self.systems), list(self.warnings)
        return data


@dataclass(frozen=True)
class LengthInstructionRow:
    """The same metric's tau on plain systems and on length-instructed systems."""

    metric: str
    plain: CorrelationRow
    length_instructed: CorrelationRow

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            "metric": self.metric,
            "plain": self.plain.to_dict(),
            "length_instructed": self.length_instructed.to_dict(),
        }


@dataclass(frozen=True)
class RankRow:
    """One system's rank (1 = best, ties averaged) under the human mean and every metric."""

    system: str
    human_mean: float
    human_rank: float
    metric_ranks: dict[str, float | None]
    metric_values: dict[str, float | None]

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True)
class Disagreement:
    """How differently a metric and the humans order the systems on one question."""

    document_id: str
    question_id: str
    gap: float
    worst_system: str
    worst_gap: float
    metric_ranks: dict[str, float]
    human_ranks: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return asdict(self)


def _finite(value: Any) -> bool:
    return value is not None and math.isfinite(float(value))


def kendall_row(metric: str, human: Mapping[str, float], values: Mapping[str, float | None]) -> CorrelationRow:
    """Correlate one metric with the human means on the systems both define."""
    systems = tuple(
        sorted(system for system in human if _finite(human[system]) and _finite(values.get(system)))
    )
    n = len(systems)
    human_column = np.array([human[system] for system in systems], dtype=np.float64)
    metric_column = np.array([values[system] for system in systems], dtype=np.float64)
    warnings: list[str] = []
    if n < MIN_SYSTEMS_TO_RANK:
        return CorrelationRow(metric, None, None, n, systems,
                              (f"not ranked: only {n} system(s) with both values, τ undefined",))
    if np.ptp(metric_column) == 0 or np.ptp(human_column) == 0:
        constant = "metric" if np.ptp(metric_column) == 0 else "human mean"
        return CorrelationRow(
            metric, None, None, n, systems, (f"the {constant} is the same for every system: τ undefined",)
        )
    result = kendall_tau_b(human_column, metric_column)
    tau, p_value = clean(result.statistic), clean(result.pvalue)
    if n < MIN_SYSTEMS_FOR_TRUST:
        # The threshold with 7 systems is said once, above the table, not on every row.
        warnings.append(f"only {n} systems (fewer than {MIN_SYSTEMS_FOR_TRUST}): τ is unreliable")
    if p_value is not None and p_value > SIGNIFICANCE_LEVEL:
        warnings.append(f"p = {p_value:.3f} > {SIGNIFICANCE_LEVEL}: not significant")
    return CorrelationRow(metric, tau, p_value, n, systems, tuple(warnings))


def metric_vs_human(
    system_human_means: Mapping[str, float], metric_values: Mapping[str, Mapping[str, float | None]]
) -> list[CorrelationRow]:
    """Return one Kendall tau-b row per metric, in the metrics' given order."""
    return [kendall_row(metric, system_human_means, values) for metric, values in metric_values.items()]


def length_instruction_comparison(
    system_human_means: Mapping[str, float],
    metric_values: Mapping[str, Mapping[str, float | None]],
    length_instructed: Collection[str],
) -> list[LengthInstructionRow]:
    """Put each metric's tau over plain systems next to its tau over length-instructed systems."""
    flagged = set(length_instructed)
    plain_means = {system: mean for system, mean in system_human_means.items() if system not in flagged}
    flagged_means = {system: mean for system, mean in system_human_means.items() if system in flagged}
    return [
        LengthInstructionRow(
            metric=metric,
            plain=kendall_row(metric, plain_means, values),
            length_instructed=kendall_row(metric, flagged_means, values),
        )
        for metric, values in metric_values.items()
    ]


def _descending_ranks(values: np.ndarray) -> np.ndarray:
    """Rank so the highest value is 1, averaging ties as tau-b does."""
    return rankdata(-values)


def rank_table(
    system_human_means: Mapping[str, float], metric_values: Mapping[str, Mapping[str, float | None]]
) -> list[RankRow]:
    """Rank every system under the human mean and under each metric, best human mean first."""
    systems = sorted(system_human_means)
    if not systems:
        return []
    human_ranks = _descending_ranks(np.array([system_human_means[s] for s in systems], dtype=np.float64))
    ranks_by_metric: dict[str, dict[str, float]] = {}
    for metric, values in metric_values.items():
        # Systems without a value are left unranked rather than ranked last.
        ranked = [system for system in systems if _finite(values.get(system))]
        if len(ranked) < MIN_SYSTEMS_TO_RANK:
            ranked = []
        metric_ranks = _descending_ranks(np.array([values[s] for s in ranked], dtype=np.float64)) if ranked else []
        ranks_by_metric[metric] = dict(zip(ranked, (float(rank) for rank in metric_ranks)))
    rows = [
        RankRow(
            system=system,
            human_mean=float(system_human_means[system]),
            human_rank=float(human_ranks[position]),
            metric_ranks={metric: ranks_by_metric[metric].get(system) for metric in metric_values},
            metric_values={metric: clean(metric_values[metric].get(system)) for metric in metric_values},
        )
        for position, system in enumerate(systems)
    ]
    return sorted(rows, key=lambda row: (row.human_rank, row.system))


def _normalised_ranks(values: np.ndarray) -> np.ndarray:
    """Map descending ranks onto [0, 1] so questions with different system counts compare."""
    return (_descending_ranks(values) - 1.0) / (len(values) - 1)


def find_disagreements(
    items: Iterable[Mapping[str, Any]],
    metric_key: str = "metric",
    human_key: str = "human",
    top_k: int | None = 20,
) -> list[Disagreement]:
    """Find the questions where a metric and the humans order the systems most differently.

    Each item is one prediction: system, document_id, question_id, the metric's
    value and the mean human score. Per question, both orderings become
    normalised ranks; the gap is their mean absolute difference, largest first.
    """
    by_question: dict[tuple[str, str], dict[str, tuple[float, float]]] = {}
    for item in items:
        metric, human = item.get(metric_key), item.get(human_key)
        if not (_finite(metric) and _finite(human)):
            continue
        question = (str(item.get("document_id", "")), str(item["question_id"]))
        by_question.setdefault(question, {})[str(item["system"])] = (float(metric), float(human))
    found = []
    for (document_id, question_id), per_system in sorted(by_question.items()):
        if len(per_system) < 2:
            continue
        systems = sorted(per_system)
        metric_ranks = _normalised_ranks(np.array([per_system[s][0] for s in systems]))
        human_ranks = _normalised_ranks(np.array([per_system[s][1] for s in systems]))
        gaps = np.abs(metric_ranks - human_ranks)
        worst = int(np.argmax(gaps))
        found.append(
            Disagreement(
                document_id=document_id,
                question_id=question_id,
                gap=float(gaps.mean()),
                worst_system=systems[worst],
                worst_gap=float(gaps[worst]),
                metric_ranks=dict(zip(systems, metric_ranks.tolist())),
                human_ranks=dict(zip(systems, human_ranks.tolist())),
            )
        )
    found.sort(key=lambda row: (-row.gap, row.document_id, row.question_id))
    return found if top_k is None else found[:top_k]


def negative_abs_length_delta(pairs_by_system: Mapping[str, Iterable[tuple[str, str]]]) -> dict[str, float]:
    """Return -|ΔL| per system from (prediction, reference) text pairs."""
    return negative_abs_delta_from_counts({
        system: [(word_count(pred), word_count(ref)) for pred, ref in pairs] for system, pairs in pairs_by_system.items()
    })


def negative_abs_delta_from_counts(counts_by_system: Mapping[str, Iterable[tuple[int, int]]]) -> dict[str, float]:
    """Return -|ΔL| per system from (prediction words, reference words) pairs.

    ΔL is the mean prediction length minus the mean reference length, in
    words; negated so that, like every other metric, higher is better.
    """
    result: dict[str, float] = {}
    for system, counts in counts_by_system.items():
        lengths = np.array(list(counts), dtype=np.float64)
        if lengths.size:
            result[system] = -abs(float(lengths[:, 0].mean() - lengths[:, 1].mean()))
    return result


def _permutation_with_inversions(n: int, inversions: int) -> list[int]:
    """Build a permutation of range(n) with exactly the given number of inversions (Lehmer code)."""
    remaining = list(range(n))
    permutation = []
    for position in range(n):
        take = min(inversions, n - 1 - position)
        inversions -= take
        permutation.append(remaining.pop(take))
    return permutation


@lru_cache(maxsize=64)
def min_significant_tau(n: int, alpha: float = SIGNIFICANCE_LEVEL) -> float | None:
    """Return the smallest tau that Kendall's exact test calls significant for n untied systems.

    For 7 systems this is 15/21 ≈ 0.714. The p-value grows with the number of
    discordant pairs, so a binary search over that number finds the boundary.
    """
    if n < 2:
        return None
    identity = list(range(n))

    def significant(inversions: int) -> bool:
        return kendall_tau_b(identity, _permutation_with_inversions(n, inversions)).pvalue < alpha

    if not significant(0):
        return None
    low, high = 0, n * (n - 1) // 4  # beyond half the pairs tau is no longer positive
    while low < high:
        middle = (low + high + 1) // 2
        if significant(middle):
            low = middle
        else:
            high = middle - 1
    return float(kendall_tau_b(identity, _permutation_with_inversions(n, low)).statistic)
