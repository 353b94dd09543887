"""How reliably each annotator reads: noise from pairwise differences, a check that scores carry signal, weights.

* **Noise.** Two annotators who scored the same answers differ by the difference of their noises (and a
  constant: their biases), so the variance of their differences is σ_a² + σ_b². With three or more
  annotators every σ_a² is identified: the method of pairwise differences, the classic estimator of
  rater error variances (Grubbs, "On estimating precision of measuring instruments and product
  variability", JASA 1948; for several raters, Dunn, *Statistical Evaluation of Measurement Errors*, 2004,
  ch. 3). Each pair's sample variance V_ab is weighted by the answers it rests on and σ² solves the least
  squares problem Σ n_ab (V_ab − σ_a² − σ_b²)², floored at NOISE_FLOOR. With two annotators only their sum
  is known, and each gets half.
* **Signal.** A constant scorer looks precise to that method (its differences with others vary only by
  the others' signal), and a random scorer merely noisy. So an annotator is also checked against the
  others: the correlation of their scores with the mean of the other annotators on the same answers
  (the item-rest correlation of test theory). An annotator whose scores barely vary is *constant*; one
  whose correlation stays under SIGNAL_MIN is *no signal*. Either is flagged, with the evidence, and is
  given no further documents and no weight unless the study's owner includes them again.
* **Weights.** Within each question an answer's mean is weighted by 1/σ̂² (inverse-variance weighting,
  the minimum-variance unbiased combination of independent measurements of one quantity).
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

NOISE_FLOOR = 0.05        # σ² never below this (a 1–5 score is rounded: noise of at least ~1/12)
MIN_COMMON = 10           # answers two annotators must share before their differences count
MIN_SIGNAL_ANSWERS = 20   # answers shared with others before the signal check may flag
SIGNAL_MIN = 0.25         # item-rest correlation under which an annotator may be flagged "no signal" …
NOISY_FACTOR = 2.0        # … when their σ̂² is also at least this many times the pool's median
CONSTANT_VARIANCE = 0.05  # variance of an annotator's own scores under which they are flagged "constant"

CONSTANT, NO_SIGNAL = "constant", "no signal"

Ratings = Mapping[tuple[int, int], Mapping[int, float]]  # (question, system) -> {annotator: score}


@dataclass(frozen=True)
class Reliability:
    annotator: int
    noise_variance: float | None   # σ̂² (None: shares too few answers with anyone)
    noise_se: float | None         # its standard error
    compared: int                  # answers shared with at least one other annotator
    signal: float | None           # item-rest correlation (None: too few shared answers, or constant)
    spread: float | None           # variance of the annotator's own scores
    flag: str | None               # None, CONSTANT or NO_SIGNAL

    def to_dict(self) -> dict:
        return {"annotator": self.annotator, "noise_sd": None if self.noise_variance is None
                else math.sqrt(self.noise_variance), "noise_variance": self.noise_variance,
                "noise_variance_se": self.noise_se, "compared": self.compared, "signal": self.signal,
                "spread": self.spread, "flag": self.flag}


def _pair_variances(ratings: Ratings) -> dict[tuple[int, int], tuple[int, float]]:
    """(answers shared, sample variance of their differences) per pair of annotators, in one pass."""
    sums: dict[tuple[int, int], list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for scores in ratings.values():
        if len(scores) < 2:
            continue
        people = sorted(scores.items())
        for i, (a, x) in enumerate(people):
            for b, y in people[i + 1:]:
                d = x - y
                entry = sums[(a, b)]
                entry[0] += 1
                entry[1] += d
                entry[2] += d * d
    return {pair: (int(n), max(0.0, (sq - total * total / n) / (n - 1)))
            for pair, (n, total, sq) in sums.items() if n >= MIN_COMMON}


def _inverse(matrix: list[list[float]]) -> list[list[float]] | None:
    """Gauss-Jordan inverse with partial pivoting; None when the matrix is singular."""
    n = len(matrix)
    rows = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        if abs(rows[pivot][col]) < 1e-9 * max(1.0, abs(rows[col][col])):
            return None
        rows[col], rows[pivot] = rows[pivot], rows[col]
        head = rows[col][col]
        rows[col] = [x / head for x in rows[col]]
        for r in range(n):
            if r != col and rows[r][col]:
                factor = rows[r][col]
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[col])]
    return [row[n:] for row in rows]


def noise_variances(ratings: Ratings) -> dict[int, tuple[float, float]]:
    """(σ̂², its standard error) of every annotator who shares MIN_COMMON answers with another (the method of
    pairwise differences; a pair's variance from n answers has variance 2V²/(n − 1), propagated through the
    least squares solution)."""
    pairs = _pair_variances(ratings)
    graph: dict[int, set[int]] = defaultdict(set)
    for a, b in pairs:
        graph[a].add(b)
        graph[b].add(a)
    estimates: dict[int, float] = {}
    seen: set[int] = set()
    for start in sorted(graph):
        if start in seen:
            continue
        component, stack = [], [start]
        seen.add(start)
        while stack:
            node = stack.pop()
            component.append(node)
            for other in graph[node]:
                if other not in seen:
                    seen.add(other)
                    stack.append(other)
        estimates.update(_component(sorted(component), pairs))
    return estimates


def _component(people: list[int], pairs: dict[tuple[int, int], tuple[int, float]]) -> dict[int, tuple[float, float]]:
    index = {a: i for i, a in enumerate(people)}
    mine = [(index[a], index[b], n, v) for (a, b), (n, v) in pairs.items() if a in index]
    matrix = [[0.0] * len(people) for _ in people]
    vector = [0.0] * len(people)
    for i, j, n, v in mine:
        for x, y in ((i, i), (j, j), (i, j), (j, i)):
            matrix[x][y] += n
        vector[i] += n * v
        vector[j] += n * v
    inverse = _inverse(matrix)
    if inverse is None:  # two annotators, or pairs that leave the split open: each gets half of what they share
        shares: dict[int, list[tuple[float, float]]] = defaultdict(list)
        for i, j, n, v in mine:
            half = (v / 2, math.sqrt(2 * v * v / (n - 1)) / 2)
            shares[i].append(half)
            shares[j].append(half)
        found = {}
        for a in people:
            values = shares[index[a]]
            found[a] = (max(NOISE_FLOOR, sum(v for v, _ in values) / len(values)),
                        sum(se for _, se in values) / len(values))
        return found
    size = len(people)
    solution = [sum(inverse[r][c] * vector[c] for c in range(size)) for r in range(size)]
    variance = [0.0] * size
    for i, j, n, v in mine:
        pair_variance = 2 * v * v / (n - 1)
        for r in range(size):
            gain = n * (inverse[r][i] + inverse[r][j])
            variance[r] += gain * gain * pair_variance
    return {a: (max(NOISE_FLOOR, solution[k]), math.sqrt(variance[k])) for a, k in index.items()}


def _signals(ratings: Ratings) -> dict[int, tuple[int, float | None, float | None]]:
    """Per annotator: (answers shared with others, item-rest correlation, variance of their own scores), in one pass."""
    sums: dict[int, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0, 0.0])
    for scores in ratings.values():
        k = len(scores)
        if k < 2:
            continue
        total = sum(scores.values())
        for a, x in scores.items():
            y = (total - x) / (k - 1)
            entry = sums[a]
            entry[0] += 1
            entry[1] += x
            entry[2] += y
            entry[3] += x * x
            entry[4] += y * y
            entry[5] += x * y
    found = {}
    for a, (n, sx, sy, sxx, syy, sxy) in sums.items():
        if n < 2:
            found[a] = (int(n), None, None)
            continue
        spread = max(0.0, (sxx - sx * sx / n) / (n - 1))
        rest_spread = max(0.0, (syy - sy * sy / n) / (n - 1))
        if spread <= 1e-12 or rest_spread <= 1e-12:
            found[a] = (int(n), None, spread)
            continue
        covariance = (sxy - sx * sy / n) / (n - 1)
        found[a] = (int(n), covariance / math.sqrt(spread * rest_spread), spread)
    return found


def reliabilities(ratings: Ratings, annotators: Iterable[int]) -> dict[int, Reliability]:
    """Every annotator's noise, signal and flag from the answers they share with others."""
    noise = noise_variances(ratings)
    known = sorted(value for value, _ in noise.values())
    median = known[len(known) // 2] if len(known) % 2 else (sum(known[len(known) // 2 - 1:len(known) // 2 + 1]) / 2
                                                           if known else 0.0)
    signals = _signals(ratings)
    found = {}
    for annotator in sorted(set(annotators)):
        compared, signal, spread = signals.get(annotator, (0, None, None))
        flag = None
        if spread is not None and compared >= MIN_COMMON and spread < CONSTANT_VARIANCE:
            flag = CONSTANT
        elif (compared >= MIN_SIGNAL_ANSWERS and (signal is None or signal < SIGNAL_MIN)
              and noise.get(annotator, (0.0, 0.0))[0] >= NOISY_FACTOR * median):
            flag = NO_SIGNAL
        value, se = noise.get(annotator, (None, None))
        found[annotator] = Reliability(annotator, value, se, compared, signal, spread, flag)
    return found


def counts(reliability: Reliability, included: Iterable[int] = ()) -> bool:
    """Whether the annotator's scores count (and they may be given documents): not flagged, or included again."""
    return reliability.flag is None or reliability.annotator in set(included)


def typical_noise(estimates: Mapping[int, Reliability], included: Iterable[int] = ()) -> float:
    """The mean σ̂² of the annotators who count and have an estimate (1.0 before anyone has one)."""
    values = [r.noise_variance for r in estimates.values()
              if r.noise_variance is not None and counts(r, included)]
    return sum(values) / len(values) if values else 1.0


def weights(estimates: Mapping[int, Reliability], included: Iterable[int] = ()) -> dict[int, float]:
    """1/σ̂² per annotator; flagged annotators 0 (unless included again); no estimate yet: the typical one's."""
    included = set(included)
    typical = typical_noise(estimates, included)
    return {a: (0.0 if not counts(r, included) else 1.0 / (r.noise_variance or typical))
            for a, r in estimates.items()}
