"""Paired significance of system differences over questions: a sign-flip permutation test and a bootstrap interval.

Two systems are compared on the questions both were scored on: d_i is system 1's score on
question i minus system 2's (each score the mean of its annotators). Under the null hypothesis
that the two systems are exchangeable on every question, each d_i is as likely to be -d_i, so
the two-sided p value is the share of sign flips whose mean difference is at least as far from 0
as the observed one: exact (all 2^n flips) for n <= EXACT_LIMIT questions, otherwise estimated
from random flips with the (k + 1) / (B + 1) correction. The interval of the mean difference is
a percentile bootstrap over questions.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.stats.bootstrap import canonical_rng
from app.core.stats.records import clean

EXACT_LIMIT = 16  # 2^16 = 65,536 sign patterns
DEFAULT_RESAMPLES = 10_000
DEFAULT_ALPHA = 0.05
# Differences within this many units of each other count as equal (float noise in means of integers).
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class PairedTest:
    n: int
    mean_difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    exact: bool

    def separable(self, alpha: float = DEFAULT_ALPHA) -> bool:
        """True when the data separate the two systems at level alpha."""
        return self.p_value is not None and self.p_value < alpha


def _sign_matrix(n: int):
    import numpy as np

    patterns = np.arange(2 ** n, dtype=np.int64)[:, None]
    bits = (patterns >> np.arange(n, dtype=np.int64)) & 1
    return 1 - 2 * bits  # +1 / -1


def permutation_p_value(differences: Sequence[float], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
                        ) -> tuple[float, bool]:
    """Return (two-sided sign-flip p value, exact?) for the mean of paired differences."""
    import numpy as np

    order, rng = canonical_rng(differences, seed)
    d = np.asarray(differences, dtype=float)[order]
    n = d.size
    observed = abs(d.mean())
    if n <= EXACT_LIMIT:
        means = np.abs(_sign_matrix(n) @ d) / n
        return float(np.mean(means >= observed - _TOLERANCE)), True
    hits = 0
    for start in range(0, resamples, 2000):
        size = min(2000, resamples - start)
        signs = rng.choice((-1.0, 1.0), size=(size, n))
        hits += int(np.sum(np.abs(signs @ d) / n >= observed - _TOLERANCE))
    return (hits + 1) / (resamples + 1), False


def bootstrap_interval(differences: Sequence[float], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                       confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean difference, resampling questions."""
    import numpy as np

    order, rng = canonical_rng(differences, seed)
    d = np.asarray(differences, dtype=float)[order]
    means = np.empty(resamples)
    for start in range(0, resamples, 2000):
        size = min(2000, resamples - start)
        means[start:start + size] = d[rng.integers(0, d.size, size=(size, d.size))].mean(axis=1)
    tail = 100.0 * (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return float(low), float(high)


def paired_test(first: Sequence[float], second: Sequence[float], *, resamples: int = DEFAULT_RESAMPLES,
                seed: int = 0, confidence: float = 0.95, bootstrap_resamples: int | None = None) -> PairedTest:
    """Compare two systems' per-question scores (same questions, same order)."""
    if len(first) != len(second):
        raise ValueError("paired scores must cover the same questions")
    differences = [a - b for a, b in zip(first, second)]
    n = len(differences)
    if n == 0:
        return PairedTest(0, None, None, None, None, False)
    mean = math.fsum(differences) / n  # fsum: the same mean whatever order the questions come in
    if n == 1:
        return PairedTest(1, mean, None, None, None, False)
    p_value, exact = permutation_p_value(differences, resamples=resamples, seed=seed)
    low, high = bootstrap_interval(differences, resamples=bootstrap_resamples or resamples, seed=seed,
                                   confidence=confidence)
    return PairedTest(n, mean, low, high, p_value, exact)


def tie_groups(tests_between_adjacent: Sequence[PairedTest], alpha: float = DEFAULT_ALPHA) -> list[int]:
    """Group labels for a ranking: adjacent systems the data cannot separate share a group."""
    groups = [0]
    for test in tests_between_adjacent:
        groups.append(groups[-1] + (1 if test.separable(alpha) else 0))
    return groups


@dataclass(frozen=True)
class AdjacentTest:
    higher: str
    lower: str
    test: PairedTest
    alpha: float

    def to_dict(self) -> dict:
        t = self.test
        return {"higher": self.higher, "lower": self.lower, "n_questions": t.n,
                "mean_difference": clean(t.mean_difference), "ci_low": clean(t.ci_low), "ci_high": clean(t.ci_high),
                "p_value": clean(t.p_value), "exact": t.exact, "separable": t.separable(self.alpha)}


def adjacent_tests(records: Iterable[Mapping[str, Any]], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                   alpha: float = DEFAULT_ALPHA, bootstrap_resamples: int | None = None) -> dict[str, Any]:
    """Test each pair of systems adjacent in the ranking by mean human score, over the questions both got.

    A system's score on a question is the mean of its annotators' scores. Returns the ranking,
    one test per adjacent pair, and tie groups: adjacent systems the data cannot separate at
    `alpha` share a group (so a group may chain A ≈ B ≈ C even when A and C differ).
    """
    from app.core.stats.human import item_means, system_means

    rows = list(records)
    means = system_means(rows)
    ranking = sorted(means, key=lambda system: (-means[system], system))
    per_item = item_means(rows)
    by_system: dict[str, dict[tuple[str, str], float]] = {}
    for (system, document_id, question_id), value in per_item.items():
        by_system.setdefault(system, {})[(document_id, question_id)] = value
    tests = []
    for higher, lower in zip(ranking, ranking[1:]):
        common = sorted(set(by_system[higher]) & set(by_system[lower]))
        test = paired_test([by_system[higher][q] for q in common], [by_system[lower][q] for q in common],
                           resamples=resamples, seed=seed, bootstrap_resamples=bootstrap_resamples)
        tests.append(AdjacentTest(higher, lower, test, alpha))
    groups = tie_groups([t.test for t in tests], alpha) if ranking else []
    return {
        "alpha": alpha,
        "method": "two-sided paired sign-flip permutation test of the mean per-question difference "
                  f"(exact up to {EXACT_LIMIT} questions, else {resamples} random flips); 95% percentile bootstrap "
                  f"interval over questions ({bootstrap_resamples or resamples} resamples)",
        "ranking": [{"system": system, "mean": means[system], "group": group} for system, group in zip(ranking, groups)],
        "tests": [t.to_dict() for t in tests],
    }
