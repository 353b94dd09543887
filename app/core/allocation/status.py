"""The ranking of an adaptive study and its stopping rule: which adjacent pairs are separated, tied or open.

* **The ranking** is the additive two-way model score = system + question (least squares by alternating
  means), so systems scored on different questions are compared fairly; on a complete design it is
  exactly the ranking by mean. Each (question, system) cell is the mean of its annotators' scores,
  weighted by their reliability (1/σ̂², reliability.py).
* **Each adjacent pair** is tested on the questions both systems were scored on, d_i being the
  difference of their cells: a paired t test of mean d = 0. With m adjacent pairs a pair is *separated*
  when p < alpha / m (Bonferroni over the m pairs) and *tied* when the t interval of the mean difference at
  confidence 1 − 2·alpha/m lies within ±margin (two one-sided tests, TOST, with the same correction).
  A pair is settled only when each of its systems was scored by at least MIN_RATERS annotators whose
  scores count: one annotator alone never settles a pair, whatever they score.
* **What is left** of an open pair is read off the same t interval, so the estimate and the test that
  decides the pair never disagree: an open pair always has at least one question left.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.core.allocation.tdist import quantile as t_quantile
from app.core.allocation.tdist import two_sided_p

DEFAULT_ALPHA = 0.05
MIN_RATERS = 2
MOST_QUESTIONS_LEFT = 100_000  # beyond this an open pair's estimate is "unknown"

SEPARATED, TIED, OPEN = "separated", "tied", "open"

Cell = tuple[int, int]  # (question, system)
Ratings = Mapping[Cell, Mapping[int, float]]  # cell -> {annotator: score}


@dataclass(frozen=True)
class Rules:
    alpha: float = DEFAULT_ALPHA
    tie_margin: float | None = None
    min_per_answer: int = 1


@dataclass(frozen=True)
class PairState:
    higher: int
    lower: int
    n: int                   # questions both systems were scored on
    mean_difference: float | None
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    state: str               # separated | tied | open
    ambiguity: float         # 0 settled … 1 nothing known
    questions_left: int | None  # further common questions the test needs to settle it (None: unknown)
    raters: tuple[int, int] = (0, 0)  # annotators whose scores count, on each system

    def to_dict(self) -> dict:
        return {"higher": self.higher, "lower": self.lower, "n_questions": self.n,
                "mean_difference": self.mean_difference, "p_value": self.p_value, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "state": self.state, "questions_left": self.questions_left,
                "raters": list(self.raters)}


@dataclass(frozen=True)
class Status:
    ranking: list[int]
    effects: dict[int, float]
    pairs: list[PairState]
    correction: str

    @property
    def settled(self) -> bool:
        return bool(self.pairs) and all(p.state != OPEN for p in self.pairs)

    @property
    def open_pairs(self) -> list[PairState]:
        return [p for p in self.pairs if p.state == OPEN]


def cell_means(ratings: Ratings, weights: Mapping[int, float] | None = None) -> dict[Cell, float]:
    """Each rated cell's mean over its annotators, weighted (annotators without a weight count 1; weight 0: left out)."""
    means = {}
    for cell, scores in ratings.items():
        total = value = 0.0
        for annotator, score in scores.items():
            w = 1.0 if weights is None else weights.get(annotator, 1.0)
            total += w
            value += w * score
        if total > 0:
            means[cell] = value / total
    return means


def additive_effects(means: Mapping[Cell, float], systems: Sequence[int], sweeps: int = 50) -> dict[int, float]:
    """System effects of the model cell = system + question, fitted by alternating means (backfitting).

    Valid when systems were scored on different questions (an adaptive design): each system is
    compared through the questions it shares with others, not through its own easier or harder
    questions. A system with no rating gets the mean effect of the others.
    """
    by_question: dict[int, list[tuple[int, float]]] = defaultdict(list)
    by_system: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for (question, system), value in means.items():
        by_question[question].append((system, value))
        by_system[system].append((question, value))
    effect = {s: 0.0 for s in systems}
    level = dict.fromkeys(by_question, 0.0)
    for _ in range(sweeps):
        for q, cells in by_question.items():
            level[q] = sum(v - effect.get(s, 0.0) for s, v in cells) / len(cells)
        moved = 0.0
        for s, cells in by_system.items():
            new = sum(v - level[q] for q, v in cells) / len(cells)
            moved = max(moved, abs(new - effect.get(s, 0.0)))
            effect[s] = new
        if moved < 1e-10:
            break
    rated = [effect[s] for s in systems if s in by_system]
    centre = sum(rated) / len(rated) if rated else 0.0
    return {s: (effect[s] - centre if s in by_system else 0.0) for s in systems}


@dataclass(frozen=True)
class PairedT:
    n: int
    mean: float
    sd: float
    p_value: float
    ci_low: float
    ci_high: float


def paired_t(differences: Sequence[float], confidence: float) -> PairedT:
    """The paired t test of mean difference 0 and the t interval at `confidence` (n >= 2)."""
    n = len(differences)
    mean = sum(differences) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / (n - 1))
    if sd == 0:
        p = 1.0 if mean == 0 else 0.0
        return PairedT(n, mean, 0.0, p, mean, mean)
    se = sd / math.sqrt(n)
    half = t_quantile(0.5 + confidence / 2, n - 1) * se
    return PairedT(n, mean, sd, two_sided_p(mean / se, n - 1), mean - half, mean + half)


def questions_left(test: PairedT, level: float, margin: float | None) -> int | None:
    """Further common questions after which, if the mean and sd stay as they are, the same test settles the pair."""
    if test.sd == 0:
        return None if test.mean == 0 and not margin else 1
    for extra in range(1, MOST_QUESTIONS_LEFT):
        n = test.n + extra
        se = test.sd / math.sqrt(n)
        if 2 * (1 - _t_cdf(abs(test.mean) / se, n - 1)) < level:
            return extra
        if margin is not None and abs(test.mean) + t_quantile(1 - level, n - 1) * se <= margin:
            return extra
        if extra > 64:  # beyond a few dozen, step by the normal approximation's estimate
            return _normal_estimate(test, level, margin)
    return None


def _t_cdf(t: float, df: float) -> float:
    return 1 - two_sided_p(t, df) / 2


def _normal_estimate(test: PairedT, level: float, margin: float | None) -> int | None:
    z = t_quantile(1 - level / 2, 10_000)
    needs = []
    if test.mean != 0:
        needs.append((z * test.sd / abs(test.mean)) ** 2)
    if margin and abs(test.mean) < margin:
        needs.append((t_quantile(1 - level, 10_000) * test.sd / (margin - abs(test.mean))) ** 2)
    if not needs or min(needs) > MOST_QUESTIONS_LEFT:
        return None
    return max(1, math.ceil(min(needs)) - test.n)


def study_status(ratings: Ratings, systems: Sequence[int], rules: Rules,
                 weights: Mapping[int, float] | None = None, *, estimate_left: bool = True) -> Status:
    """The ranking, and each adjacent pair: separated, tied within the margin, or open (the stopping rule).

    `estimate_left=False` leaves out what is left of each open pair (the study page shows it; the policy
    does not need it)."""
    means = cell_means(ratings, weights)
    effects = additive_effects(means, systems)
    ranking = sorted(systems, key=lambda s: (-effects[s], s))
    m = max(len(ranking) - 1, 1)
    level = rules.alpha / m
    by_system: dict[int, dict[int, float]] = defaultdict(dict)
    raters: dict[int, set[int]] = defaultdict(set)
    for (q, s), v in means.items():
        by_system[s][q] = v
    for (_, s), scores in ratings.items():
        raters[s].update(a for a in scores if weights is None or weights.get(a, 1.0) > 0)
    pairs = []
    for higher, lower in zip(ranking, ranking[1:]):
        common = sorted(set(by_system[higher]) & set(by_system[lower]))
        diffs = [by_system[higher][q] - by_system[lower][q] for q in common]
        counted = (len(raters[higher]), len(raters[lower]))
        state, ambiguity, p, low, high, mean, left = OPEN, 1.0, None, None, None, None, None
        if len(common) >= 2:
            test = paired_t(diffs, 1 - 2 * level)
            p, low, high, mean = test.p_value, test.ci_low, test.ci_high, test.mean
            enough = min(counted) >= MIN_RATERS
            if enough and p < level:
                state = SEPARATED
            elif enough and rules.tie_margin is not None and -rules.tie_margin <= low and high <= rules.tie_margin:
                state = TIED
            half = (high - low) / 2
            ambiguity = 0.0 if state != OPEN else (1.0 if half <= 0 else max(0.05, min(1.0, 1 - abs(mean) / half)))
            left = 0 if state != OPEN else (questions_left(test, level, rules.tie_margin) if estimate_left else None)
        pairs.append(PairState(higher, lower, len(common), mean, p, low, high, state, ambiguity, left, counted))
    correction = (f"Bonferroni over the {m} adjacent pair(s): separated when the paired t test gives "
                  f"p < {rules.alpha:g}/{m}; "
                  + (f"tied when the {100 * (1 - 2 * level):.2f}% t interval lies within ±{rules.tie_margin:g}"
                     if rules.tie_margin is not None else "no tie margin set")
                  + f"; a pair is settled only on scores from at least {MIN_RATERS} annotators on each system")
    return Status(ranking, effects, pairs, correction)
