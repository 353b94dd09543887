"""Kendall's τ-b with its two-sided p-value, and average ranks: scipy.stats' kendalltau and rankdata, in numpy.

Why not scipy: importing scipy.stats takes 1–2.5 s, which was most of a results page's first
load after the server starts. These are the same formulas as scipy's (`kendalltau` with
method='auto', variant='b'; `rankdata` with method='average'): the exact null distribution for
untied data of up to 33 items (or at most one discordant or concordant pair), the normal
approximation with the tie-corrected variance otherwise. tests/core/test_kendall.py holds them
to scipy's results.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

EXACT_UP_TO = 33  # scipy's 'auto': exact p-values for untied samples this small


class KendallResult(NamedTuple):
    statistic: float
    pvalue: float


def rankdata(values) -> np.ndarray:
    """Ranks from 1, tied values sharing the mean of their ranks (scipy's method='average')."""
    values = np.asarray(values).ravel()
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(starts) - 1
    bounds = np.r_[np.nonzero(starts)[0], len(values)]
    mean_rank = (bounds[:-1] + bounds[1:] + 1) / 2.0  # ranks first+1 … last, averaged
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = mean_rank[group]
    return ranks


def _dense(values: np.ndarray) -> np.ndarray:
    """Dense ranks 1…k in the order of the values."""
    _, inverse = np.unique(values, return_inverse=True)
    return inverse.ravel().astype(np.int64) + 1


def _tie_sums(ranks: np.ndarray) -> tuple[int, int, int]:
    counts = np.bincount(ranks).astype(np.int64)
    counts = counts[counts > 1]
    return (int((counts * (counts - 1) // 2).sum()), int((counts * (counts - 1) * (counts - 2)).sum()),
            int((counts * (counts - 1) * (2 * counts + 5)).sum()))


# Dense ranks with at most this many (x rank, y rank) cells are counted through their table (1-5 scores: 36 cells).
TABLE_CELLS = 4096


def _discordant(x: np.ndarray, y: np.ndarray) -> int:
    """Pairs ordered one way by x and the other by y: inversions of y once sorted by (x, y)."""
    width = int(y.max()) + 1
    if (int(x.max()) + 1) * width <= TABLE_CELLS:
        return _discordant_by_table(x, y, width)
    order = np.lexsort((y, x))
    tree = [0] * (int(y.max()) + 1)  # a Fenwick tree of the y ranks seen so far
    inversions = 0
    for seen, rank in enumerate(y[order].tolist()):
        not_above, index = 0, rank
        while index > 0:
            not_above += tree[index]
            index -= index & -index
        inversions += seen - not_above
        index = rank
        while index < len(tree):
            tree[index] += 1
            index += index & -index
    return inversions


def _discordant_by_table(x: np.ndarray, y: np.ndarray, width: int) -> int:
    """The same count from the table of (x, y) pairs: each cell times the cells with a larger x and a smaller y
    (exact integers, in a few array passes instead of a Python loop over the items)."""
    table = np.bincount(x * width + y, minlength=(int(x.max()) + 1) * width).reshape(-1, width)
    larger_x = np.zeros_like(table)
    larger_x[:-1] = table[::-1].cumsum(axis=0)[::-1][1:]  # rows below each cell
    below = np.zeros_like(table)
    below[:, 1:] = larger_x.cumsum(axis=1)[:, :-1]  # and, of those, the columns left of it
    return int((table * below).sum())


def _exact_p(n: int, concordant: int) -> float:
    """Two-sided exact p-value of `concordant` concordant pairs among n untied items (Kendall 1970)."""
    c = min(concordant, n * (n - 1) // 2 - concordant)
    if n <= 2:
        return 1.0
    if c == 0:
        return 2.0 / math.factorial(n)
    if c == 1:
        return 2.0 / math.factorial(n - 1)
    if 4 * c == n * (n - 1):
        return 1.0
    counts = np.zeros(c + 1)
    counts[0:2] = 1.0
    for j in range(3, n + 1):
        counts = np.cumsum(counts)
        if j <= c:
            counts[j:] -= counts[:c + 1 - j]
    return min(1.0, float(2.0 * np.sum(counts) / math.factorial(n)))


def kendall_tau_b(x, y) -> KendallResult:
    """Kendall's τ-b of two equally long samples and its two-sided p-value; NaN for an empty or constant one."""
    x, y = np.asarray(x).ravel(), np.asarray(y).ravel()
    if x.size != y.size:
        raise ValueError("x and y differ in length")
    size = x.size
    if size == 0:
        return KendallResult(math.nan, math.nan)
    x_ranks, y_ranks = _dense(x), _dense(y)
    total = size * (size - 1) // 2
    x_ties, x0, x1 = _tie_sums(x_ranks)
    y_ties, y0, y1 = _tie_sums(y_ranks)
    if x_ties == total or y_ties == total:
        return KendallResult(math.nan, math.nan)
    joint = np.unique(x_ranks * (int(y_ranks.max()) + 1) + y_ranks, return_counts=True)[1].astype(np.int64)
    both_ties = int((joint * (joint - 1) // 2).sum())
    discordant = _discordant(x_ranks, y_ranks)
    con_minus_dis = total - x_ties - y_ties + both_ties - 2 * discordant
    tau = con_minus_dis / math.sqrt(total - x_ties) / math.sqrt(total - y_ties)
    tau = min(1.0, max(-1.0, tau))
    untied = x_ties == 0 and y_ties == 0
    if untied and (size <= EXACT_UP_TO or min(discordant, total - discordant) <= 1):
        return KendallResult(tau, _exact_p(size, total - discordant))
    m = size * (size - 1.0)
    variance = ((m * (2 * size + 5) - x1 - y1) / 18 + (2 * x_ties * y_ties) / m
                + x0 * y0 / (9 * m * (size - 2)))
    z = con_minus_dis / math.sqrt(variance)
    return KendallResult(tau, math.erfc(abs(z) / math.sqrt(2)))
