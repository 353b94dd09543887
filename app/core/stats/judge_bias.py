"""Judge bias probes: position consistency, swap flips, P(longer answer wins), a length-controlled win rate.

Each pair was judged in both orders ("AB": the system is assistant A; "BA": it is B), so a
pair gives up to two verdicts, recorded from the system's side as win/loss/tie/error.

* Position consistency: the share of complete pairs (both orders judged, no error) whose two
  outcomes agree. A swap flip is the strongest disagreement: the system wins in one order and
  loses in the other, i.e. the judge named the same position both times.
* P(longer wins): among decided pairs (both orders agree on a winner) whose answers differ in
  length, the share won by the longer answer, with a Wilson score interval.
* Length-controlled win rate, in the manner of AlpacaEval 2's LC (Dubois et al., 2024,
  "Length-Controlled AlpacaEval", arXiv:2404.04475; their "length_controlled_minimal" GLM): a
  logistic model of each verdict (win 1, tie 0.5, loss 0) on tanh(ΔL / sd(ΔL)), ΔL the system's
  length minus the baseline's, fitted by maximum likelihood with a weak L2 penalty; the
  length-controlled win rate is the model's prediction at ΔL = 0.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

DECIDED = ("win", "loss")
# Weak L2 penalty (a normal prior with sd ~3.2 on each logit coefficient): it keeps the fit finite
# when the data separate perfectly (a judge that always picks the longer answer), and is negligible
# against the likelihood of a few dozen verdicts or more.
L2_PENALTY = 0.1
WILSON_Z = 1.959963984540054  # two-sided 95%


@dataclass(frozen=True)
class PairVerdicts:
    """One pair's two verdicts from the system's side (None: not judged) and the answers' lengths."""

    pair_id: object
    system_length: int
    baseline_length: int
    ab: str | None
    ba: str | None
    task: str = ""

    @property
    def complete(self) -> bool:
        return self.ab not in (None, "error") and self.ba not in (None, "error")

    def judged(self) -> list[tuple[str, str]]:
        """(order, outcome) for each order judged without error."""
        return [(order, outcome) for order, outcome in (("AB", self.ab), ("BA", self.ba))
                if outcome not in (None, "error")]


@dataclass(frozen=True)
class Proportion:
    successes: int
    trials: int
    share: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class PositionProbe:
    complete_pairs: int
    consistent_pairs: int
    consistency: float | None
    swap_flips: int
    swap_flip_rate: float | None
    first_position: Proportion  # decided verdicts won by the answer shown first


@dataclass(frozen=True)
class LengthControlled:
    observations: int
    win_rate: float | None  # raw, %: (wins + 0.5 ties) / verdicts
    lc_win_rate: float | None  # %, predicted at ΔL = 0
    intercept: float | None
    length_coefficient: float | None
    length_scale: float | None  # sd of ΔL used to standardise it
    converged: bool
    ci_low: float | None = None  # percentile bootstrap over pairs, %
    ci_high: float | None = None


@dataclass(frozen=True)
class BiasProbes:
    """Every probe for one set of pairs (a run, or one task of it)."""

    pairs: int
    position: PositionProbe
    longer_wins: Proportion
    length_controlled: LengthControlled


def wilson_interval(successes: int, trials: int, z: float = WILSON_Z) -> Proportion:
    """Return the share with its Wilson score interval (None when there are no trials)."""
    if trials <= 0:
        return Proportion(successes, trials, None, None, None)
    share = successes / trials
    denominator = 1 + z * z / trials
    centre = (share + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials)) / denominator
    return Proportion(successes, trials, share, max(0.0, centre - half), min(1.0, centre + half))


def position_probe(pairs: Iterable[PairVerdicts]) -> PositionProbe:
    """Position consistency, swap flips and the first position's share of decided verdicts."""
    complete = consistent = flips = first_wins = decided = 0
    for pair in pairs:
        for order, outcome in pair.judged():
            if outcome in DECIDED:
                decided += 1
                first_wins += (order == "AB") == (outcome == "win")
        if not pair.complete:
            continue
        complete += 1
        consistent += pair.ab == pair.ba
        flips += {pair.ab, pair.ba} == {"win", "loss"}
    return PositionProbe(
        complete_pairs=complete, consistent_pairs=consistent,
        consistency=None if complete == 0 else consistent / complete,
        swap_flips=flips, swap_flip_rate=None if complete == 0 else flips / complete,
        first_position=wilson_interval(first_wins, decided),
    )


def longer_wins(pairs: Iterable[PairVerdicts]) -> Proportion:
    """P(the longer answer wins) among decided pairs whose answers differ in length."""
    wins = trials = 0
    for pair in pairs:
        if not pair.complete or pair.ab != pair.ba or pair.ab not in DECIDED:
            continue
        if pair.system_length == pair.baseline_length:
            continue
        trials += 1
        system_longer = pair.system_length > pair.baseline_length
        wins += system_longer == (pair.ab == "win")
    return wilson_interval(wins, trials)


def _observations(pairs: Iterable[PairVerdicts]) -> tuple[list[float], list[float]]:
    deltas, targets = [], []
    for pair in pairs:
        for _order, outcome in pair.judged():
            deltas.append(float(pair.system_length - pair.baseline_length))
            targets.append({"win": 1.0, "tie": 0.5, "loss": 0.0}[outcome])
    return deltas, targets


def _pair_row(pair: PairVerdicts) -> tuple[float, float, float]:
    """What the length-controlled fit reads of a pair: its length difference and each order's target (NaN: none)."""
    targets = {"win": 1.0, "tie": 0.5, "loss": 0.0}
    judged = dict(pair.judged())
    return (float(pair.system_length - pair.baseline_length),
            targets.get(judged.get("AB", ""), float("nan")), targets.get(judged.get("BA", ""), float("nan")))


def fit_logistic(features: Sequence[float], targets: Sequence[float], *, weights: Sequence[float] | None = None,
                 penalty: float = L2_PENALTY, max_iterations: int = 100) -> tuple[float, float, bool]:
    """Fit logit P = a + b * x to soft targets in [0, 1] by penalised Newton steps; return (a, b, converged).

    `weights` count each observation that many times (a bootstrap resample).
    """
    import numpy as np

    x = np.asarray(features, dtype=float)
    y = np.asarray(targets, dtype=float)
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float)
    design = np.column_stack([np.ones_like(x), x])
    beta = np.zeros(2)
    for _ in range(max_iterations):
        p = 1.0 / (1.0 + np.exp(-(design @ beta)))
        gradient = design.T @ (w * (y - p)) - penalty * beta
        hessian = design.T @ (design * (w * p * (1 - p))[:, None]) + penalty * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            return float(beta[0]), float(beta[1]), True
    return float(beta[0]), float(beta[1]), False


def _fit(deltas, targets, weights=None) -> tuple[float, float | None, float, bool]:
    """(intercept, slope or None, scale, converged) of the logistic fit on tanh(ΔL / sd(ΔL))."""
    import numpy as np

    d = np.asarray(deltas, dtype=float)
    w = np.ones_like(d) if weights is None else np.asarray(weights, dtype=float)
    n = w.sum()
    mean = (w * d).sum() / n
    scale = math.sqrt(float((w * (d - mean) ** 2).sum() / (n - 1))) if n > 1 else 0.0
    features = np.tanh(d / scale) if scale > 0 else np.zeros_like(d)
    intercept, slope, converged = fit_logistic(features, targets, weights=w)
    return intercept, (slope if scale > 0 else None), scale, converged


def _sigmoid_percent(value: float) -> float:
    return 100.0 / (1.0 + math.exp(-value))


def length_controlled(pairs: Iterable[PairVerdicts], *, resamples: int = 200, seed: int = 0,
                      confidence: float = 0.95) -> LengthControlled:
    """Fit the verdicts on tanh(ΔL / sd(ΔL)) and predict the win rate at ΔL = 0, with a bootstrap interval."""
    pairs = [pair for pair in pairs if pair.judged()]
    if not pairs:
        return LengthControlled(0, None, None, None, None, None, False)
    from app.core.stats.bootstrap import canonical_rng

    # Pairs in their canonical order, resampled from a seed of their data: the same verdicts, the same interval.
    order, rng = canonical_rng([_pair_row(pair) for pair in pairs], seed)
    pairs = [pairs[position] for position in order]
    deltas, targets = _observations(pairs)
    n = len(targets)
    raw = 100.0 * sum(targets) / n
    intercept, slope, scale, converged = _fit(deltas, targets)
    low = high = None
    if resamples > 0 and len(pairs) > 1:
        import numpy as np

        # Whole pairs are resampled (a pair's verdicts share one length difference): each observation
        # is weighted by how often its pair was drawn.
        owner = np.repeat(np.arange(len(pairs)), [len(pair.judged()) for pair in pairs])
        rates = []
        for picks in rng.integers(0, len(pairs), size=(resamples, len(pairs))):
            drawn = np.bincount(picks, minlength=len(pairs))[owner]
            keep = drawn > 0
            rates.append(_sigmoid_percent(_fit(np.asarray(deltas)[keep], np.asarray(targets)[keep], drawn[keep])[0]))
        tail = 100.0 * (1.0 - confidence) / 2.0
        low, high = (float(v) for v in np.percentile(rates, [tail, 100.0 - tail]))
    return LengthControlled(n, raw, _sigmoid_percent(intercept), intercept, slope, scale or None, converged,
                            low, high)


def probe(pairs: Iterable[PairVerdicts], *, resamples: int = 200, seed: int = 0) -> BiasProbes:
    """Run every probe on one set of pairs."""
    pairs = list(pairs)
    return BiasProbes(len(pairs), position_probe(pairs), longer_wins(pairs),
                      length_controlled(pairs, resamples=resamples, seed=seed))


def probe_by_task(pairs: Iterable[PairVerdicts], *, resamples: int = 200, seed: int = 0) -> dict[str, BiasProbes]:
    """{task: probes} for every task the pairs come from, in first-seen order."""
    groups: dict[str, list[PairVerdicts]] = {}
    for pair in pairs:
        groups.setdefault(pair.task, []).append(pair)
    return {task: probe(group, resamples=resamples, seed=seed) for task, group in groups.items()}
