"""Win-rate aggregations of pairwise verdicts against a baseline.

Two aggregations are reported side by side because they answer slightly different questions:

* L-Eval: every verdict counts on its own (two per pair), errors are dropped,
  win % = 100 * (wins + 0.5 * ties) / (wins + losses + ties).
* FastChat: one outcome per pair from its two orders; a pair whose orders disagree
  counts as a tie, a pair with an error (or a missing order) is dropped;
  win % = 100 * (wins + 0.5 * ties) / pairs ("win_rate_adjusted" in FastChat).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Protocol


from app.core.judge.prompt import Order
from app.core.judge.verdict import Outcome, Verdict, system_outcome


class JudgedVerdict(Protocol):
    """Anything with a pair id, an order and a verdict: a JudgmentResult or a DB row."""

    @property
    def pair_id(self) -> Any: ...

    @property
    def order(self) -> Order: ...

    @property
    def verdict(self) -> Verdict | None: ...


@dataclass(frozen=True)
class Aggregation:
    """Counts and win rates; keys match the judge CLI's --json output."""

    wins: int
    losses: int
    ties: int
    errors: int
    inconsistent: int
    win_rate: float | None
    win_rate_fastchat: float | None
    consistency: float | None
    ci_low: float | None
    ci_high: float | None
    pairs: int
    complete_pairs: int

    def to_dict(self) -> dict[str, Any]:
        """Return the aggregation as a plain dict."""
        return asdict(self)


def _outcomes_by_pair(verdicts: Iterable[JudgedVerdict]) -> dict[Any, dict[str, Outcome]]:
    """Group outcomes by pair id, refusing two judgments for the same pair and order."""
    by_pair: dict[Any, dict[str, Outcome]] = {}
    for judged in verdicts:
        slot = by_pair.setdefault(judged.pair_id, {})
        if judged.order in slot:
            # Silently keeping one would make the counts depend on row order;
            # the caller must pass one judgment per (pair, order), e.g. the latest.
            raise ValueError(f"two judgments for pair {judged.pair_id!r} in order {judged.order}")
        slot[judged.order] = system_outcome(judged.order, judged.verdict)
    return by_pair


def _rate(wins: int, losses: int, ties: int) -> float | None:
    total = wins + losses + ties
    return None if total == 0 else 100.0 * (wins + 0.5 * ties) / total


def count_outcomes(verdicts: Iterable[JudgedVerdict]) -> dict[Outcome, int]:
    """Count win/loss/tie/error verdicts from the system under test's point of view."""
    counts = Counter(system_outcome(v.order, v.verdict) for v in verdicts)
    return {key: counts.get(key, 0) for key in ("win", "loss", "tie", "error")}  # type: ignore[misc]


def leval_win_rate(verdicts: Iterable[JudgedVerdict]) -> float | None:
    """Return L-Eval's win % over individual verdicts (errors dropped), None if none are valid."""
    counts = count_outcomes(verdicts)
    return _rate(counts["win"], counts["loss"], counts["tie"])


def fastchat_pair_outcomes(verdicts: Iterable[JudgedVerdict]) -> dict[Any, Outcome]:
    """Return one outcome per pair with both orders judged; disagreeing orders make a tie."""
    pair_outcomes: dict[Any, Outcome] = {}
    for pair_id, slots in _outcomes_by_pair(verdicts).items():
        first, second = slots.get("AB"), slots.get("BA")
        if first is None or second is None or "error" in (first, second):
            continue
        pair_outcomes[pair_id] = first if first == second else "tie"
    return pair_outcomes


def fastchat_win_rate(verdicts: Iterable[JudgedVerdict]) -> float | None:
    """Return FastChat's tie-adjusted win % over complete pairs, None if there are none."""
    counts = Counter(fastchat_pair_outcomes(verdicts).values())
    return _rate(counts["win"], counts["loss"], counts["tie"])


def position_consistency(verdicts: Iterable[JudgedVerdict]) -> tuple[float | None, int, int]:
    """Return (share of complete pairs whose two orders agree, inconsistent count, complete count)."""
    complete = inconsistent = 0
    for slots in _outcomes_by_pair(verdicts).values():
        first, second = slots.get("AB"), slots.get("BA")
        if first is None or second is None or "error" in (first, second):
            continue
        complete += 1
        inconsistent += first != second
    share = None if complete == 0 else (complete - inconsistent) / complete
    return share, inconsistent, complete


def bootstrap_ci(
    verdicts: Iterable[JudgedVerdict],
    *,
    iterations: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """Return a percentile bootstrap interval of the L-Eval win %, resampling whole pairs."""
    # Resampling pairs, not single verdicts, keeps a pair's two correlated verdicts together.
    by_pair = _outcomes_by_pair(verdicts)
    if not by_pair or iterations <= 0:
        return None, None
    import numpy as np  # only the interval needs it; importing the judge stays light

    from app.core.stats.bootstrap import canonical_rng

    points = np.zeros(len(by_pair))
    valid = np.zeros(len(by_pair))
    for index, slots in enumerate(by_pair.values()):
        for outcome in slots.values():
            points[index] += {"win": 1.0, "tie": 0.5}.get(outcome, 0.0)
            valid[index] += outcome != "error"
    # Seeded from the pairs' outcomes, in their canonical order: the same verdicts, the same interval.
    order, rng = canonical_rng(np.column_stack([points, valid]), seed)
    points, valid = points[order], valid[order]
    samples = rng.integers(0, len(by_pair), size=(iterations, len(by_pair)))
    sampled_valid = valid[samples].sum(axis=1)
    usable = sampled_valid > 0
    if not usable.any():
        return None, None
    rates = 100.0 * points[samples].sum(axis=1)[usable] / sampled_valid[usable]
    tail = 100.0 * (1.0 - confidence) / 2.0
    low, high = np.percentile(rates, [tail, 100.0 - tail])
    return float(low), float(high)


def aggregate(
    verdicts: Iterable[JudgedVerdict],
    *,
    bootstrap_iterations: int = 1000,
    seed: int = 0,
) -> Aggregation:
    """Compute every count and rate the leaderboard and the CLI show."""
    verdicts = list(verdicts)
    counts = count_outcomes(verdicts)
    consistency, inconsistent, complete = position_consistency(verdicts)
    ci_low, ci_high = bootstrap_ci(verdicts, iterations=bootstrap_iterations, seed=seed)
    return Aggregation(
        wins=counts["win"],
        losses=counts["loss"],
        ties=counts["tie"],
        errors=counts["error"],
        inconsistent=inconsistent,
        win_rate=_rate(counts["win"], counts["loss"], counts["tie"]),
        win_rate_fastchat=fastchat_win_rate(verdicts),
        consistency=consistency,
        ci_low=ci_low,
        ci_high=ci_high,
        pairs=len({v.pair_id for v in verdicts}),
        complete_pairs=complete,
    )


def leval_statistics(verdicts: Iterable[JudgedVerdict], system_name: str, baseline_name: str
                     ) -> tuple[dict[str, int], dict[str, float]]:
    """Count as llm_eval.py does: {"tie", "error", <each winning model name>} and its win rates in %.

    Wins are counted by model name, so two sides with the same name share one count. Errors are
    dropped; a name's rate is (its wins + ties / 2) / (all wins + ties), for every name that won
    at least once (as upstream prints them).
    """
    statistics: dict[str, int] = {"tie": 0, "error": 0}
    names = {"win": system_name, "loss": baseline_name, "tie": "tie", "error": "error"}
    for judged in verdicts:
        name = names[system_outcome(judged.order, judged.verdict)]
        statistics[name] = statistics.get(name, 0) + 1
    counted = {name: count for name, count in statistics.items() if name != "error"}
    total = sum(counted.values())
    half_ties = 0.5 * counted.pop("tie")
    rates = {name: 100.0 * (half_ties + wins) / total for name, wins in counted.items()}
    return statistics, rates
