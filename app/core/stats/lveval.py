"""LV-Eval analyses: level curves with bootstrap intervals, the context ceiling, needle cells and ablation deltas.

Inputs are per-question scores in [0, 1]; outputs are on LV-Eval's 0-100 scale. numpy loads only when
an interval is computed.
"""
from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from app.core.metrics.files import LVEVAL_DATASETS

SEED = 20240206
RESAMPLES = 1000
CONFIDENCE = 0.95
# A score is flagged when the low end of its interval clears the ceiling by this many points.
LEAKAGE_MARGIN = 5.0
DEPTH_BINS = 10
NOMINAL_WORDS = {"16k": 16_000, "32k": 32_000, "64k": 64_000, "128k": 128_000, "256k": 256_000}

# LV-Eval's ablations (its paper compares each against the full benchmark).
VARIANT_KINDS = {
    "no_cfi": "without confusing-fact insertion (CFI)",
    "no_kpr": "without keyword and phrase replacement (KPR)",
    "no_context": "with no context at all",
    "other": "another variant",
}


@dataclass(frozen=True)
class Point:
    """A mean on the 0-100 scale, its bootstrap interval (None with fewer than two questions) and n."""

    mean: float
    low: float | None
    high: float | None
    n: int


def _means(scores: Sequence[float], seed: int):
    import numpy as np

    from app.core.stats.bootstrap import canonical_resample_weights

    values = np.asarray(scores, dtype=np.float64)
    order, weights = canonical_resample_weights(values, RESAMPLES, seed)
    return weights @ values[order] / len(values)


def _interval(resampled) -> tuple[float, float]:
    from app.core.stats.bootstrap import percentile_interval

    low, high = percentile_interval(resampled[:, None], CONFIDENCE)
    return 100.0 * float(low[0]), 100.0 * float(high[0])


def mean_point(scores: Sequence[float], *, seed: int = SEED) -> Point | None:
    """Mean x 100 with a percentile bootstrap interval over questions."""
    if not scores:
        return None
    mean = 100.0 * math.fsum(scores) / len(scores)  # fsum: the same sum in any order
    if len(scores) < 2:
        return Point(mean, None, None, len(scores))
    low, high = _interval(_means(scores, seed))
    return Point(mean, low, high, len(scores))


def overall_point(per_dataset: Mapping[str, Sequence[float]], *, seed: int = SEED) -> Point | None:
    """LV-Eval's overall: the mean of the datasets' means, resampling questions within each dataset."""
    import numpy as np

    # By name: the datasets' order (and each one's salt) is the data's, not the caller's.
    groups = [list(per_dataset[name]) for name in sorted(per_dataset, key=str) if per_dataset[name]]
    if not groups:
        return None
    mean = 100.0 * math.fsum(math.fsum(g) / len(g) for g in groups) / len(groups)
    n = sum(len(g) for g in groups)
    if any(len(g) < 2 for g in groups):
        return Point(mean, None, None, n)
    stacked = np.mean([_means(g, seed + i) for i, g in enumerate(groups)], axis=0)
    low, high = _interval(stacked)
    return Point(mean, low, high, n)


def overall_complete(datasets: Collection[str]) -> bool:
    """Whether LV-Eval's overall can be given at a level: it is the mean over LV-Eval's 11 datasets, so a model
    with fewer has another number (the mean of its own datasets), which must not be ranked beside it."""
    return set(LVEVAL_DATASETS) <= set(datasets)


def paired_delta(base: Mapping[object, float], variant: Mapping[object, float], *, seed: int = SEED) -> Point | None:
    """Variant minus base over the questions both answered (x 100), with a paired bootstrap interval."""
    keys = [key for key in base if key in variant]
    return mean_point([variant[key] - base[key] for key in keys], seed=seed)


# --- the context ceiling ---------------------------------------------------------------------


def visible_share(window_tokens: int | None, context_words: float | None, words_per_token: float = 1.0) -> float | None:
    """The share of an Ld-word context a model with an Lm-token window can read: min(1, Lm x w / Ld).

    LV-Eval truncates the middle of longer prompts, so the model reads at most that share.
    """
    if not window_tokens or not context_words or context_words <= 0:
        return None
    return min(1.0, window_tokens * words_per_token / context_words)


@dataclass(frozen=True)
class Ceiling:
    """Per level: the share of the context the model reads, and the score it can reach by reading."""

    shares: dict[str, float]
    reference_level: str | None  # the longest level read whole, whose score the ceiling scales
    values: dict[str, float]  # levels read in part only


def ceiling(levels: Sequence[str], scores: Mapping[str, float], window_tokens: int | None,
            context_words: Mapping[str, float], words_per_token: float = 1.0) -> Ceiling | None:
    """LV-Eval's reading-ceiling argument: a model that reads Lm of Ld words can, by reading, keep at most
    that share of the score it gets when it reads everything (its longest fully-read level; 100 if none)."""
    shares = {}
    for level in levels:
        share = visible_share(window_tokens, context_words.get(level) or NOMINAL_WORDS.get(level), words_per_token)
        if share is not None:
            shares[level] = share
    if not shares:
        return None
    full = [level for level in levels if shares.get(level) == 1.0 and level in scores]
    reference = full[-1] if full else None
    base = scores[reference] if reference else 100.0
    values = {level: base * share for level, share in shares.items() if share < 1.0}
    return Ceiling(shares=shares, reference_level=reference, values=values)


def leakage_flags(points: Mapping[str, Point | None], ceiling_values: Mapping[str, float]) -> dict[str, bool]:
    """Flag a level whose score is far above the ceiling: the low end of its interval clears it by the margin."""
    flags = {}
    for level, limit in ceiling_values.items():
        point = points.get(level)
        if point is None:
            continue
        low = point.low if point.low is not None else point.mean
        flags[level] = low > limit + LEAKAGE_MARGIN
    return flags


# --- needles ---------------------------------------------------------------------------------


def depth_label(index: int, bins: int = DEPTH_BINS) -> str:
    return f"{100 * index // bins}–{100 * (index + 1) // bins}%"


def needle_cells(rows: Sequence[tuple[str, float, float]], levels: Sequence[str],
                 bins: int = DEPTH_BINS) -> tuple[list[str], list[list[float | None]], list[list[int]]]:
    """Mean score x 100 per (depth bin, level) from (level, depth in [0, 1], score) rows."""
    sums = [[0.0] * len(levels) for _ in range(bins)]
    counts = [[0] * len(levels) for _ in range(bins)]
    column = {level: i for i, level in enumerate(levels)}
    for level, depth, score in rows:
        if level not in column:
            continue
        row = min(int(depth * bins), bins - 1)
        sums[row][column[level]] += score
        counts[row][column[level]] += 1
    cells = [[100.0 * s / n if n else None for s, n in zip(srow, nrow)] for srow, nrow in zip(sums, counts)]
    return [depth_label(i, bins) for i in range(bins)], cells, counts
