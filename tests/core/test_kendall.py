"""The numpy Kendall τ-b and average ranks agree with scipy.stats, which the results pages no longer import."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from app.core.stats.kendall import kendall_tau_b, rankdata


def _same(ours: float, theirs: float) -> bool:
    if math.isnan(theirs):
        return math.isnan(ours)
    return math.isclose(ours, float(theirs), rel_tol=1e-9, abs_tol=1e-12)


def _check(x, y) -> None:
    ours = kendall_tau_b(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on a sample of one; ours answers NaN silently
        theirs = stats.kendalltau(x, y, variant="b")
    assert _same(ours.statistic, theirs.statistic), (x, y, ours, theirs)
    assert _same(ours.pvalue, theirs.pvalue), (x, y, ours, theirs)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 60).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 5), min_size=n, max_size=n), st.lists(st.integers(1, 5), min_size=n, max_size=n))))
def test_tied_scores_match_scipy(pair):
    _check(*pair)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 45).flatmap(lambda n: st.tuples(st.permutations(range(n)), st.permutations(range(n)))))
def test_untied_samples_match_scipy_exact_and_asymptotic(pair):
    _check(*pair)


@pytest.mark.parametrize("n", [2, 3, 7, 12, 33, 34, 40])
def test_orderings_at_the_exact_boundaries_match_scipy(n):
    identity = list(range(n))
    for permutation in (identity, identity[::-1], [1, 0, *identity[2:]], [*identity[:-2], n - 1, n - 2]):
        _check(identity, permutation)


def test_floats_and_large_samples_match_scipy():
    rng = np.random.default_rng(3)
    x = rng.normal(size=700)
    _check(x, x + rng.normal(size=700))
    _check(np.round(x, 1), np.round(-x + rng.normal(size=700), 1))


def test_constant_or_empty_samples_have_no_tau():
    assert math.isnan(kendall_tau_b([], []).statistic)
    assert math.isnan(kendall_tau_b([3, 3, 3], [1, 2, 3]).pvalue)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False) | st.integers(-3, 3), max_size=40))
def test_average_ranks_match_scipy(values):
    assert np.array_equal(rankdata(np.array(values, dtype=np.float64)),
                          stats.rankdata(np.array(values, dtype=np.float64), method="average"))


def test_discordant_pairs_counted_through_the_table_equal_the_tree_count():
    """Scores take five values: the discordant pairs are counted from the 5 × 5 table of pairs (issue 38, 190
    annotator pairs of a lab study took 0.3 s through the Python tree); both counts are the same integers."""
    from app.core.stats import kendall

    rng = np.random.default_rng(38)
    for _ in range(300):
        size = int(rng.integers(1, 80))
        x = kendall._dense(rng.integers(1, int(rng.integers(2, 9)), size=size))
        y = kendall._dense(rng.integers(1, int(rng.integers(2, 9)), size=size))
        by_table = kendall._discordant_by_table(x, y, int(y.max()) + 1)
        order = np.lexsort((y, x))
        ranks = y[order]
        by_pairs = sum(1 for i in range(size) for j in range(i + 1, size) if ranks[i] > ranks[j])
        assert by_table == by_pairs == kendall._discordant(x, y)
