"""The simulated world of bench_allocation and the pure run of every design on it (no database).

The ground truth (hierarchical): quality(q, s) = 3 + system_s + question_q + interaction_qs, and an
annotator's score is round(quality + bias_a + noise_a), clipped to 1–5, each annotator with a bias and a
noise level of their own; a spammer scores at random (uniform on 1–5) or always the same value.
Common random numbers: annotator a's score of answer (q, s) is drawn once per seed and is the same in
every design, so the designs are compared on the same draws.

The adaptive design runs app.core.allocation's policy exactly as services/studies/allocation.py does
(the same inputs, in the same order, with the same seeded random choices), so the services, run on the
same seeds, give the same documents, answers and ranking (bench_allocation checks it on 20 seeds).
"""
from __future__ import annotations

import dataclasses
import math
import random
from collections import defaultdict
from dataclasses import dataclass, field

from app.core import allocation as policy

N_SYSTEMS, N_QUESTIONS, N_DOCUMENTS = 7, 85, 12
SYSTEM_SD, QUESTION_SD, INTERACTION_SD, BIAS_SD = 0.35, 0.6, 0.5, 0.2
MAIN_NOISE_SD, NOISE_SPREAD = 0.7, 0.3  # main, hard, easy: each annotator's noise sd is 0.7 × U(0.7, 1.3)
TIE_MARGIN = None  # ranking accuracy is the measure: no pair is let off as tied
UNIFORM, CONSTANT = "uniform", "constant"

# The annotator pools: noise sds (a spammer by its kind).
POOLS = {
    "main": None, "hard": None, "easy": None,  # three annotators of the main noise model
    "p1": (0.5, 0.6, 0.7, 0.9, 1.2, 1.6),
    "p2": (0.5, 0.6, 0.7, 0.9, 1.2, UNIFORM),
    "p3": tuple(round(0.5 + i / 8, 4) for i in range(9)) + (CONSTANT,),
}
CASES = tuple(POOLS)


def document_sizes() -> list[int]:
    return [N_QUESTIONS // N_DOCUMENTS + (1 if d < N_QUESTIONS % N_DOCUMENTS else 0) for d in range(N_DOCUMENTS)]


def document_text(d: int) -> str:
    """The fictional long document d of the benchmark's data set (bench_allocation writes it in L-Eval's format)."""
    return "\n\n".join(f"Page {i} of record {d}: {i * 3 + d} entries were filed." for i in range(40))


def document_loads() -> dict[int, float]:
    """Each document's reading load, as the services compute it from the stored counts."""
    return {d: policy.reading_load(len(document_text(d).split()), len(document_text(d))) for d in range(N_DOCUMENTS)}


@dataclass
class World:
    """One seed of one case: the truth and every annotator's score of every answer."""

    case: str
    seed: int
    systems: list[int]
    questions: list[int]
    documents: dict[int, list[int]]          # document -> its questions, in order
    words: dict[int, float]
    annotators: list[int]
    ranking: list[int]                       # the true ranking
    scores: dict[tuple[int, int, int], int]  # (question, system, annotator) -> score

    def __post_init__(self) -> None:
        self.document_of = {q: d for d, qs in self.documents.items() for q in qs}


def make_world(case: str, seed: int, systems=None, questions=None, documents=None, annotators=None,
               words=None) -> World:
    """The world of (case, seed). Ids may be given (the services' database ids); the draws depend only on order."""
    systems = systems or list(range(N_SYSTEMS))
    sizes = document_sizes()
    if questions is None:
        questions = list(range(N_QUESTIONS))
    if documents is None:
        documents, start = {}, 0
        for d, size in enumerate(sizes):
            documents[d] = questions[start:start + size]
            start += size
    pool = POOLS[case]
    count = 3 if pool is None else len(pool)
    annotators = annotators or list(range(count))
    if words is None:
        loads = document_loads()
        words = {d: loads[i] for i, d in enumerate(documents)}
    rng = random.Random(f"{case}:{seed}")
    if case == "easy":
        effects = {s: 0.5 * (i - (len(systems) - 1) / 2) for i, s in enumerate(rng.sample(systems, len(systems)))}
    else:
        effects = {s: rng.gauss(0, SYSTEM_SD) for s in systems}
        if case == "hard":
            order = sorted(systems, key=lambda s: effects[s])
            middle = len(order) // 2
            effects[order[middle]] = effects[order[middle - 1]] + 0.03
    difficulty = {q: rng.gauss(0, QUESTION_SD) for q in questions}
    quality = {(q, s): 3 + effects[s] + difficulty[q] + rng.gauss(0, INTERACTION_SD) for q in questions for s in systems}
    bias = {a: rng.gauss(0, BIAS_SD) for a in annotators}
    if pool is None:
        kinds = {a: MAIN_NOISE_SD * rng.uniform(1 - NOISE_SPREAD, 1 + NOISE_SPREAD) for a in annotators}
    else:
        order = rng.sample(annotators, len(annotators))  # which account gets which noise level: at random
        kinds = dict(zip(order, pool))
    constant = rng.randint(2, 4)
    scores = {}
    for q in questions:
        for s in systems:
            for a in annotators:
                kind = kinds[a]
                noise = rng.gauss(0, 1)
                if kind == UNIFORM:
                    value = rng.randint(1, 5)
                elif kind == CONSTANT:
                    value = constant
                else:
                    value = max(1, min(5, round(quality[(q, s)] + bias[a] + kind * noise)))
                scores[(q, s, a)] = value
    ranking = sorted(systems, key=lambda s: -effects[s])
    return World(case, seed, systems, questions, documents, words, annotators, ranking, scores)


BUDGET_SHARE = 0.7  # the adaptive study's reading budget in the benchmark, as a share of fixed k = 3's documents


def reading_budget(documents: int) -> int:
    return math.floor(BUDGET_SHARE * 3 * documents)


def kendall_tau(ranking: list[int], true: list[int]) -> float:
    place = {s: i for i, s in enumerate(ranking)}
    pairs = [(a, b) for i, a in enumerate(true) for b in true[i + 1:]]
    return sum(1 if place[a] < place[b] else -1 for a, b in pairs) / len(pairs)


def ranking_of(ratings, systems, weights=None) -> list[int]:
    effects = policy.additive_effects(policy.cell_means(ratings, weights), systems)
    return sorted(systems, key=lambda s: (-effects[s], s))


@dataclass
class Outcome:
    documents: int
    answers: int
    ranking: list[int]
    given: list[tuple[int, int, tuple[int, ...]]] = field(default_factory=list)  # (annotator, question, systems)

    def scored(self, world: World) -> dict:
        return {"documents": self.documents, "answers": self.answers, "exact": self.ranking == world.ranking,
                "tau": kendall_tau(self.ranking, world.ranking)}


def fixed_design(world: World, k: int, rng: random.Random) -> Outcome:
    """Every document to k annotators (policy.share_documents, as assignment.rebalance does), every answer scored."""
    plan = policy.share_documents(world.words, world.annotators, k, rng)
    ratings: dict = defaultdict(dict)
    answers = 0
    for document, people in plan.items():
        for q in world.documents[document]:
            for s in world.systems:
                for a in people:
                    ratings[(q, s)][a] = world.scores[(q, s, a)]
                    answers += 1
    return Outcome(sum(len(p) for p in plan.values()), answers, ranking_of(ratings, world.systems))


@dataclass
class AdaptiveState:
    """What services/studies/allocation.py reads from the database, kept in memory."""

    given: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))       # document -> annotators
    questions_given: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))  # annotator -> questions
    queue: dict[int, list[tuple[int, list[int]]]] = field(default_factory=lambda: defaultdict(list))
    ratings: dict = field(default_factory=lambda: defaultdict(dict))
    pending: dict = field(default_factory=lambda: defaultdict(int))
    steps: int = 0
    answers: int = 0
    version: int = 0  # scores saved: the estimates and the status only change with them
    cached: tuple | None = None


def adaptive_decision(world: World, state: AdaptiveState, annotator: int, design: policy.Design, rules: policy.Rules,
                      seed_text: str, max_answers: int | None = None) -> policy.Decision:
    """One request for a new document: the policy's decision on the state the services would read."""
    documents = tuple(policy.Document(d, world.words[d], len(qs) * len(world.systems))
                      for d, qs in sorted(world.documents.items()))
    candidates = [policy.Candidate(q, world.document_of[q], tuple(world.systems))
                  for q in world.questions if q not in state.questions_given[annotator]]
    if state.cached is None or state.cached[0] != state.version:
        estimates = policy.reliabilities(state.ratings, world.annotators)
        weights = policy.weights(estimates, design.included)
        status = policy.study_status(state.ratings, world.systems, rules, weights, estimate_left=False)
        state.cached = (state.version, estimates, status)
    _, estimates, status = state.cached
    if status.settled:
        return policy.Decision(None, "settled")
    waiting = bool(policy.not_calibrated(world.annotators, documents, design.calibration, state.given))
    design = dataclasses.replace(design, waiting_for_others=waiting)  # the start guard, as design_of works it out
    situation = policy.Situation(annotator, tuple(world.annotators), documents,
                                 {d: frozenset(p) for d, p in state.given.items()}, candidates, state.ratings,
                                 dict(state.pending))
    rng = random.Random(f"{seed_text}:{state.steps + 1}")
    return policy.decide(situation, status, rules, design, rng, max_answers, estimates)


def adaptive_design(world: World, design: policy.Design | None = None, seed_text: str | None = None,
                    budget_answers: int | None = None) -> Outcome:
    """Annotators take turns, one question each (as bench_allocation's services run does), until nobody is given more."""
    design = design or policy.Design()
    rules = policy.Rules(tie_margin=TIE_MARGIN)
    seed_text = seed_text or f"{world.case}:{world.seed}"
    state = AdaptiveState()
    outcome = Outcome(0, 0, [])
    active = list(world.annotators)
    while active:
        waiting = 0
        for annotator in list(active):
            if not state.queue[annotator]:
                left = None if budget_answers is None else budget_answers - state.answers
                decision = adaptive_decision(world, state, annotator, design, rules, seed_text, left)
                if decision.choice is None:
                    if decision.reason == policy.WAIT:
                        waiting += 1
                    else:
                        active.remove(annotator)
                    continue
                state.steps += 1
                choice = decision.choice
                state.given[choice.document].add(annotator)
                for q, systems in choice.answers.items():
                    state.questions_given[annotator].add(q)
                    state.queue[annotator].append((q, systems))
                    for s in systems:
                        state.pending[(q, s)] += 1
                    state.answers += len(systems)
                    outcome.given.append((annotator, q, tuple(systems)))
            q, systems = state.queue[annotator].pop(0)
            state.version += 1
            for s in systems:
                state.ratings[(q, s)][annotator] = world.scores[(q, s, annotator)]
                state.pending[(q, s)] -= 1
                if not state.pending[(q, s)]:
                    del state.pending[(q, s)]
        if active and waiting == len(active):
            break
    estimates = policy.reliabilities(state.ratings, world.annotators)
    outcome.documents = sum(len(p) for p in state.given.values())
    outcome.answers = state.answers
    outcome.ranking = ranking_of(state.ratings, world.systems, policy.weights(estimates, design.included))
    return outcome
