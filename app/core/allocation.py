"""Active human evaluation: which document, questions and answers an annotator should score next, and
when a study's ranking is settled. Pure: plain values in and out (the database side is
services/studies/allocation.py).

The method, and where it comes from:

* **What must be learnt.** Only the order of systems adjacent in the ranking matters for the
  ranking; a pair far apart is settled early. This is the top-k / best-arm identification view of
  LUCB (Kalyanakrishnan, Tewari, Auer and Stone, "PAC subset selection in stochastic multi-armed
  bandits", ICML 2012) applied to every adjacent boundary of a full ranking, as in active ranking
  (Heckel, Shah, Ramchandran and Wainwright, "Active ranking from pairwise comparisons and when
  parametric assumptions do not help", Annals of Statistics 2019): sample where the confidence
  intervals of neighbours still overlap, stop sampling a pair once they do not.
* **The ranking** is the additive two-way model score = system + question (least squares by
  alternating means), so systems scored on different questions are compared fairly; on a complete
  design it is exactly the ranking by mean.
* **Each adjacent pair** is tested with the app's paired test (core.stats.paired: sign-flip
  permutation test of the mean per-question difference over the questions both systems were scored
  on, each cell the mean of its annotators). With m adjacent pairs the pair is *separated* when
  p < alpha / m (Bonferroni over the m pairs), and *tied* when the bootstrap interval of the mean
  difference at confidence 1 - 2·alpha/m lies inside [-margin, +margin] (two one-sided tests,
  TOST, with the same correction). The study is settled when every adjacent pair is one or the
  other; adjacency is read from the data, so the rule is re-checked after every rating.
* **The ambiguity of a pair** is LUCB's overlap: the half-width of its (corrected) interval minus
  the distance between the two systems, in units of that half-width; a document's value is the
  ambiguity of the open pairs its questions inform. A question is worth more to a pair when neither
  system has a rating on it yet (a new question removes question-to-question variance; a repeat
  rating only annotator noise).
* **Which answers: successive elimination** (Even-Dar, Mannor and Mansour, "Action elimination and
  stopping conditions for the multi-armed bandit and reinforcement learning problems", JMLR 2006):
  a system stays *active* while one of its adjacent pairs is open, and every active system's answer
  is shown on a chosen question; a system whose neighbours are all settled is no longer scored.
  Showing only the most ambiguous pair instead starves the other open pairs: an annotator is given
  a question once, so an answer left out then can never be scored by them later (measured in
  bench_allocation: with the focus on the most ambiguous pairs the adaptive study ended *less*
  accurate than fixed k = 3 on the same documents).
* **The cost is the reading.** A document is chosen by value / cost, where the cost of a document
  the annotator has not read is 1 and of one they have is READ_AGAIN_COST; the step gives every
  question of that document that still matters, so one reading serves them all. FILLERS answers of
  inactive systems, drawn at random, are shown beside the active ones, so that the answers shown
  are never exactly the contended set (no answer becomes a tell).
"""
from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

DEFAULT_ALPHA = 0.05
READ_AGAIN_COST = 0.25
FILLERS = 1
# Resamples of the paired test inside the stopping rule: enough for p values down to alpha / m.
TEST_RESAMPLES = 2000
# How many allocated documents an annotator may be ahead of the least-loaded annotator who started.
BALANCE_DOCUMENTS = 2

SEPARATED, TIED, OPEN = "separated", "tied", "open"

Cell = tuple[int, int]  # (question, system)


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
    questions_left: int | None  # estimated further common questions to settle it (None: unknown)

    def to_dict(self) -> dict:
        return {"higher": self.higher, "lower": self.lower, "n_questions": self.n,
                "mean_difference": self.mean_difference, "p_value": self.p_value, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "state": self.state, "questions_left": self.questions_left}


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


def cell_means(ratings: Mapping[Cell, Sequence[float]]) -> dict[Cell, float]:
    """The mean of each rated (question, system) cell's annotators."""
    return {cell: sum(values) / len(values) for cell, values in ratings.items() if values}


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


def _normal_quantile(p: float) -> float:
    """Inverse standard normal CDF (Acklam's rational approximation; |error| < 1.2e-9)."""
    a = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02, 1.383577518672690e02,
         -3.066479806614716e01, 2.506628277459239e00)
    b = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01,
         -1.328068155288572e01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00, -2.549732539343734e00,
         4.374664141464968e00, 2.938163982698783e00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / \
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    if p > 1 - 0.02425:
        return -_normal_quantile(1 - p)
    q = p - 0.5
    r = q * q
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / \
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)


def _default_test(first: Sequence[float], second: Sequence[float], confidence: float):
    from app.core.stats.paired import paired_test

    return paired_test(first, second, resamples=TEST_RESAMPLES, confidence=confidence)


def _questions_left(diffs: Sequence[float], z: float, margin: float | None) -> int | None:
    """Common questions still needed, from the normal approximation n = (z·sd / gap)^2."""
    n = len(diffs)
    if n < 2:
        return None
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    if sd == 0:
        return 0 if mean != 0 or margin else None
    needs = []
    if mean != 0:
        needs.append((z * sd / abs(mean)) ** 2)
    if margin and abs(mean) < margin:
        needs.append((z * sd / (margin - abs(mean))) ** 2)
    if not needs:
        return None
    return max(0, math.ceil(min(needs)) - n)


def study_status(ratings: Mapping[Cell, Sequence[float]], systems: Sequence[int], rules: Rules,
                 test: Callable = _default_test) -> Status:
    """The ranking, and each adjacent pair: separated, tied within the margin, or open (the stopping rule)."""
    means = cell_means(ratings)
    effects = additive_effects(means, systems)
    ranking = sorted(systems, key=lambda s: (-effects[s], s))
    m = max(len(ranking) - 1, 1)
    level = rules.alpha / m
    z = _normal_quantile(1 - level / 2)
    by_system: dict[int, dict[int, float]] = defaultdict(dict)
    for (q, s), v in means.items():
        by_system[s][q] = v
    pairs = []
    for higher, lower in zip(ranking, ranking[1:]):
        common = sorted(set(by_system[higher]) & set(by_system[lower]))
        first = [by_system[higher][q] for q in common]
        second = [by_system[lower][q] for q in common]
        diffs = [a - b for a, b in zip(first, second)]
        state, ambiguity, p, low, high, mean = OPEN, 1.0, None, None, None, None
        if len(common) >= 2:
            result = test(first, second, 1 - 2 * level)
            p, low, high, mean = result.p_value, result.ci_low, result.ci_high, result.mean_difference
            if p is not None and p < level:
                state = SEPARATED
            elif (rules.tie_margin is not None and low is not None
                  and -rules.tie_margin <= low and high <= rules.tie_margin):
                state = TIED
            half = (high - low) / 2 if low is not None else 0.0
            ambiguity = 0.0 if state != OPEN else (1.0 if half <= 0 else max(0.05, min(1.0, 1 - abs(mean) / half)))
        left = 0 if state != OPEN else _questions_left(diffs, z, rules.tie_margin)
        pairs.append(PairState(higher, lower, len(common), mean, p, low, high, state, ambiguity, left))
    correction = (f"Bonferroni over the {m} adjacent pair(s): separated when p < {rules.alpha:g}/{m}; "
                  + (f"tied when the {100 * (1 - 2 * level):.2f}% interval lies within ±{rules.tie_margin:g}"
                     if rules.tie_margin is not None else "no tie margin set"))
    return Status(ranking, effects, pairs, correction)


@dataclass(frozen=True)
class Candidate:
    """A question the annotator has not been given: its document and the systems it shows."""

    question: int
    document: int
    systems: tuple[int, ...]


@dataclass(frozen=True)
class Choice:
    document: int
    answers: dict[int, list[int]]   # question -> systems to show
    value: float
    pairs: list[tuple[int, int]] = field(default_factory=list)


def _counts(ratings: Mapping[Cell, Sequence[float]], pending: Mapping[Cell, int]) -> dict[Cell, int]:
    counts: dict[Cell, int] = defaultdict(int)
    for cell, values in ratings.items():
        counts[cell] += len(values)
    for cell, n in pending.items():
        counts[cell] += n  # given to someone, not scored yet: counted as on its way
    return counts


def choose(status: Status, ratings: Mapping[Cell, Sequence[float]], candidates: Sequence[Candidate],
           read: set[int], rules: Rules, rng: random.Random, pending: Mapping[Cell, int] | None = None,
           max_answers: int | None = None) -> Choice | None:
    """The document, questions and answers that tell the most about the open pairs per reading (None: nothing left).

    `read` are the documents this annotator was already given; `pending` counts cells given to
    annotators and not scored yet. Cells rated fewer than `min_per_answer` times are completed
    first (for any system), whatever the pairs say.
    """
    counts = _counts(ratings, pending or {})
    open_pairs = status.open_pairs
    active = {s for p in open_pairs for s in (p.higher, p.lower)}  # successive elimination: the rest are settled
    by_document: dict[int, list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        by_document[candidate.document].append(candidate)
    best: tuple[float, float, Choice] | None = None
    for document, questions in by_document.items():
        answers: dict[int, list[int]] = {}
        value = 0.0
        for candidate in questions:
            offered = set(candidate.systems)
            chosen: set[int] = set()
            q_value = 0.0
            for pair in open_pairs:
                if pair.higher in offered and pair.lower in offered:
                    seen = min(counts.get((candidate.question, pair.higher), 0),
                               counts.get((candidate.question, pair.lower), 0))
                    q_value += pair.ambiguity / (1 + 3 * seen)
            if q_value > 0:
                chosen |= active & offered
            short = [s for s in offered if 0 < counts.get((candidate.question, s), 0) < rules.min_per_answer]
            if short:
                q_value += 0.5 * len(short)
                chosen |= set(short)
            if q_value <= 0 or not chosen:
                continue
            others = sorted(offered - chosen)
            chosen |= set(rng.sample(others, min(FILLERS, len(others))))
            answers[candidate.question] = sorted(chosen)
            value += q_value
        if not answers:
            continue
        if max_answers is not None:
            answers = _trim(answers, max_answers)
            if not answers:
                continue
        cost = READ_AGAIN_COST if document in read else 1.0
        key = (value / cost, rng.random())
        if best is None or key > best[:2]:
            best = (key[0], key[1], Choice(document, answers, value, [(p.higher, p.lower) for p in open_pairs]))
    return best[2] if best else None


def _trim(answers: dict[int, list[int]], limit: int) -> dict[int, list[int]]:
    """Keep whole questions, in order, while they fit in `limit` answers (the budget)."""
    kept, used = {}, 0
    for question, systems in answers.items():
        if used + len(systems) > limit:
            break
        kept[question] = systems
        used += len(systems)
    return kept


def within_balance(loads: Mapping[int, int], annotator: int, tolerance: int = BALANCE_DOCUMENTS) -> bool:
    """True when giving this annotator one more document keeps them within `tolerance` documents of the
    least-loaded annotator who has started (loads: documents given per annotator)."""
    mine = loads.get(annotator, 0)
    others = [n for who, n in loads.items() if who != annotator]
    return not others or mine + 1 - min(others) <= tolerance
