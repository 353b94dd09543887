"""Student's t distribution: the two-sided p value and the quantile the stopping rule needs.

Written out (the regularized incomplete beta function by Lentz's continued fraction, as in Press et
al., *Numerical Recipes*, 3rd ed., §6.4) because the annotator's request decides the next document
with it, and importing scipy there cost 0.7–1.4 s of a first request; tests/core/test_tdist.py holds
both functions to scipy.stats.t to 1e-10.
"""
from __future__ import annotations

import math
from functools import lru_cache

_EPS = 1e-15
_TINY = 1e-300


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        step = d * c
        h *= step
        if abs(step - 1.0) < _EPS:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with `df` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


@lru_cache(maxsize=4096)
def quantile(p: float, df: float) -> float:
    """The p quantile of Student's t (0 < p < 1), by bisection on the distribution function."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must lie strictly between 0 and 1")
    if p == 0.5:
        return 0.0
    upper_tail = 1.0 - p if p > 0.5 else p  # P(T > q) for the positive quantile q
    low, high = 0.0, 1.0
    while two_sided_p(high, df) / 2.0 > upper_tail:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if two_sided_p(middle, df) / 2.0 > upper_tail:
            low = middle
        else:
            high = middle
        if high - low < 1e-12 * max(1.0, high):
            break
    q = (low + high) / 2.0
    return q if p > 0.5 else -q
