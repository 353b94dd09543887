"""Agreement between annotators: Krippendorff's ordinal alpha, pairwise tau and agreement rates."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import krippendorff
import numpy as np

from app.core.stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    canonical_resample_weights,
    percentile_interval,
)
from app.core.stats.kendall import kendall_tau_b
from app.core.stats.records import (
    SCORE_VALUES,
    ItemKey,
    clean,
    item_key,
    score_of,
)

IDENTICAL_RATINGS = (
    "all ratings identical: α undefined (with no variation the expected disagreement is zero, "
    "and α divides by it)"
)
NO_OVERLAP = "no item was scored by two or more annotators: α undefined"
# Below this many answers scored by two or more annotators, α is given with a warning: from 2 answers it can be
# 1.000 by luck, and the bootstrap over so few answers cannot show how unsure it is (as Metrics vs humans flags
# fewer than 7 systems).
MIN_PAIRABLE_FOR_TRUST = 10


@dataclass(frozen=True)
class ReliabilityData:
    """Annotators × items matrix of scores, NaN where an annotator did not score an item."""

    matrix: np.ndarray
    annotators: tuple[str, ...]
    items: tuple[ItemKey, ...]

    def for_system(self, system: str) -> ReliabilityData:
        """Keep only the items (predictions) of one system."""
        keep = [position for position, item in enumerate(self.items) if item[0] == system]
        return ReliabilityData(self.matrix[:, keep], self.annotators, tuple(self.items[i] for i in keep))


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's alpha with its bootstrap interval, or None and the reason it is undefined."""

    scope: str
    alpha: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    n_pairable_items: int
    reason: str | None = None

    @property
    def warning(self) -> str | None:
        """Why a defined α should not be trusted: too few answers scored by two or more annotators."""
        if self.alpha is None or self.n_pairable_items >= MIN_PAIRABLE_FOR_TRUST:
            return None
        answers = "answer" if self.n_pairable_items == 1 else "answers"
        return (f"only {self.n_pairable_items} {answers} scored by two or more annotators (fewer than "
                f"{MIN_PAIRABLE_FOR_TRUST}): α is unreliable")

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {**asdict(self), "warning": self.warning}


@dataclass(frozen=True)
class PairAgreement:
    """How two annotators agree on the items both scored."""

    annotator_a: str
    annotator_b: str
    n_common: int
    tau: float | None
    p_value: float | None
    exact: float | None
    within_one: float | None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return asdict(self)


def reliability_data(records: Iterable[Mapping[str, Any]]) -> ReliabilityData:
    """Build the annotators × items matrix; a later score for the same item replaces an earlier one."""
    latest: dict[tuple[str, ItemKey], int] = {}
    for record in records:
        latest[(str(record["annotator"]), item_key(record))] = score_of(record)
    annotators = tuple(sorted({annotator for annotator, _ in latest}))
    items = tuple(sorted({item for _, item in latest}))
    annotator_index = {annotator: i for i, annotator in enumerate(annotators)}
    item_index = {item: i for i, item in enumerate(items)}
    matrix = np.full((len(annotators), len(items)), np.nan)
    for (annotator, item), score in latest.items():
        matrix[annotator_index[annotator], item_index[item]] = score
    return ReliabilityData(matrix, annotators, items)


def items_scored_by_two_or_more(data: ReliabilityData) -> int:
    """Count items at least two annotators scored, the only ones alpha can use."""
    return int((np.isfinite(data.matrix).sum(axis=0) >= 2).sum())


def package_alpha(matrix: np.ndarray) -> tuple[float | None, str | None]:
    """Compute ordinal alpha with the krippendorff package; return (None, reason) where undefined."""
    if matrix.size == 0 or (np.isfinite(matrix).sum(axis=0) >= 2).sum() == 0:
        return None, NO_OVERLAP
    try:
        with np.errstate(invalid="ignore", divide="ignore"):
            value = krippendorff.alpha(
                reliability_data=matrix, value_domain=list(SCORE_VALUES), level_of_measurement="ordinal"
            )
    except ValueError as error:
        # The package refuses a value domain of one value; with value_domain given it
        # instead divides 0 by 0. Both mean the same thing: no variation to compare.
        if "more than one value" in str(error):
            return None, IDENTICAL_RATINGS
        return None, f"α undefined: {error}"
    if not np.isfinite(value):
        return None, IDENTICAL_RATINGS
    return float(value), None


def _unit_coincidences(matrix: np.ndarray) -> np.ndarray:
    """Return each item's contribution to the coincidence matrix, flattened to (items, V*V)."""
    values = np.asarray(SCORE_VALUES, dtype=np.float64)
    counts = (matrix.T[:, :, None] == values[None, None, :]).sum(axis=1).astype(np.float64)
    pairable = counts.sum(axis=1)
    outer = counts[:, :, None] * counts[:, None, :]
    outer -= counts[:, :, None] * np.eye(len(values))[None, :, :]
    # Items with fewer than two scores have an all-zero numerator; max(..., 2) only avoids 0/0.
    per_unit = outer / (np.maximum(pairable, 2.0) - 1.0)[:, None, None]
    return per_unit.reshape(len(counts), -1)


def alpha_from_coincidences(coincidences: np.ndarray) -> np.ndarray:
    """Compute ordinal alpha for a stack of (…, V, V) coincidence matrices at once.

    Same formula as the krippendorff package, batched so a thousand
    bootstrap resamples cost one array pass instead of a thousand calls.
    """
    n_v = coincidences.sum(axis=-2)
    total = n_v.sum(axis=-1)
    size = n_v.shape[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = (n_v[..., :, None] * n_v[..., None, :] - n_v[..., :, None] * np.eye(size)) / (
            total[..., None, None] - 1.0
        )
        low = np.minimum.outer(np.arange(size), np.arange(size))
        high = np.maximum.outer(np.arange(size), np.arange(size))
        cumulative = np.concatenate([np.zeros(n_v.shape[:-1] + (1,)), np.cumsum(n_v, axis=-1)], axis=-1)
        between = cumulative[..., high + 1] - cumulative[..., low]
        distance = (between - (n_v[..., low] + n_v[..., high]) / 2.0) ** 2
        observed = (coincidences * distance).sum(axis=(-2, -1))
        chance = (expected * distance).sum(axis=(-2, -1))
        return 1.0 - observed / chance


def bootstrap_alpha(
    matrix: np.ndarray, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> np.ndarray:
    """Return alpha for each bootstrap resample of the items (NaN where a resample is degenerate)."""
    per_unit = _unit_coincidences(matrix)
    order, weights = canonical_resample_weights(per_unit, n_resamples, seed)  # an item is its coincidences
    size = len(SCORE_VALUES)
    resampled = (weights @ per_unit[order]).reshape(n_resamples, size, size)
    return alpha_from_coincidences(resampled)


def alpha_result(
    data: ReliabilityData,
    scope: str = "overall",
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> AlphaResult:
    """Compute alpha for one set of items with a seeded bootstrap interval over items."""
    value, reason = package_alpha(data.matrix)
    pairable = items_scored_by_two_or_more(data)
    ci_low = ci_high = None
    if value is not None and n_resamples > 0:
        low, high = percentile_interval(bootstrap_alpha(data.matrix, n_resamples, seed)[:, None], confidence)
        ci_low, ci_high = clean(low[0]), clean(high[0])
    return AlphaResult(scope, value, ci_low, ci_high, len(data.items), pairable, reason)


def alpha_by_system(
    data: ReliabilityData,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> list[AlphaResult]:
    """Compute alpha overall (first row) and for each system's items."""
    systems = sorted({item[0] for item in data.items})
    results = [alpha_result(data, "overall", n_resamples, confidence, seed)]
    results += [alpha_result(data.for_system(s), s, n_resamples, confidence, seed) for s in systems]
    return results


def pairwise_agreement(data: ReliabilityData) -> list[PairAgreement]:
    """Compare every pair of annotators on the items both scored."""
    rows = []
    for a, b in itertools.combinations(range(len(data.annotators)), 2):
        both = np.isfinite(data.matrix[a]) & np.isfinite(data.matrix[b])
        x, y = data.matrix[a, both], data.matrix[b, both]
        n_common = int(both.sum())
        names = (data.annotators[a], data.annotators[b])
        if n_common == 0:
            rows.append(PairAgreement(*names, 0, None, None, None, None, "no item scored by both"))
            continue
        exact = float(np.mean(x == y))
        within_one = float(np.mean(np.abs(x - y) <= 1))
        if n_common < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
            reason = "fewer than two common items" if n_common < 2 else "one annotator gave a single value: τ undefined"
            rows.append(PairAgreement(*names, n_common, None, None, exact, within_one, reason))
            continue
        result = kendall_tau_b(x, y)
        rows.append(
            PairAgreement(*names, n_common, clean(result.statistic), clean(result.pvalue), exact, within_one)
        )
    return rows
