"""Which document, questions and answers an annotator should score next in an adaptive study.

Reading the document is the cost, so the policy chooses **who reads** each document, and then which of
its answers still matter:

1. **Calibration.** Every annotator first reads their calibration document(s) (the ones with the fewest
   answers, then the fewest words; a pool of ten or more splits into groups of at least five, each with
   its own: calibration.py) and scores every answer on them. Their shared answers give each annotator's
   noise and signal (reliability.py).
2. **Guard at the start.** Until every listed annotator has been given the calibration documents (or the
   owner's start window has passed), nobody is given more than one document beyond them: one fast
   annotator cannot spend the budget before the others have started.
3. **Who reads.** Each other document is read until its scores are as precise as `overlap_target`
   typical annotators' (precision Σ 1/σ̂² of its readers ≥ overlap_target / mean σ̂²), by the most
   reliable annotators who may still read: not flagged (unless the owner included them again), under the
   owner's cap. An annotator is given a document only while they are among the readers it still needs,
   so documents go to reliable readers, and a noisy pool reads each document more often than a precise one.
4. **Which documents first.** Among those, the document whose questions inform the open adjacent pairs
   most (LUCB's ambiguity: Kalyanakrishnan, Tewari, Auer and Stone, ICML 2012; Heckel et al., Annals of
   Statistics 2019), a new question being worth more to a pair than a repeat rating.
5. **Which answers: successive elimination** (Even-Dar, Mannor and Mansour, JMLR 2006): every system
   still in an open pair is shown on a chosen question, with FILLERS answers of settled systems drawn at
   random so the answers shown are never exactly the contended set; cells short of the minimum per
   answer are completed first.

Every random choice comes from the `rng` the caller seeds from the study's stored secret seed and the
step, so a study can be replayed for an audit and an annotator cannot predict it.
"""
from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.core.allocation.calibration import all_documents, calibration_groups, group_of, is_calibrated
from app.core.allocation.reliability import Reliability, counts, reliabilities
from app.core.allocation.status import Cell, Ratings, Rules, Status

READ_AGAIN_COST = 0.25
FILLERS = 1
DEFAULT_CALIBRATION = 1
DEFAULT_OVERLAP_TARGET = 2
REFERENCE_OVERLAP = 3  # a document needs no more precision than a fixed study's k = 3 of the same pool give it
NEAR_RANDOM = 2.0      # the noise variance a flagged annotator counts for in that reference (uniform 1–5: 2)

# Why nothing was given (the services add SETTLED and BUDGET, decided before the policy is asked).
WAIT, NOT_NEEDED, EXHAUSTED = "ahead", "not_needed", "exhausted"


@dataclass(frozen=True)
class Document:
    id: int
    words: float
    answers: int   # answers the study shows on it


@dataclass(frozen=True)
class Candidate:
    """A question the annotator has not been given: its document and the systems it shows."""

    question: int
    document: int
    systems: tuple[int, ...]


@dataclass(frozen=True)
class Design:
    calibration: int = DEFAULT_CALIBRATION       # documents every annotator reads first
    readings: int | None = None                   # the readings the study may spend, calibration included
    overlap_target: int = DEFAULT_OVERLAP_TARGET  # without `readings`: this many readings per document
    cap: int | None = None                        # the most documents one annotator is given
    included: frozenset[int] = frozenset()        # flagged annotators the owner lets read on
    waiting_for_others: bool = False              # someone listed has not calibrated, within the start window


@dataclass(frozen=True)
class Situation:
    annotator: int
    annotators: tuple[int, ...]                   # who may read (listed, or those who started)
    documents: tuple[Document, ...]
    given: Mapping[int, frozenset[int]]           # document -> annotators given some of it
    candidates: Sequence[Candidate]               # questions not yet given to this annotator
    ratings: Ratings                              # cell -> {annotator: score}
    pending: Mapping[Cell, int] = field(default_factory=dict)  # given and not scored yet


@dataclass(frozen=True)
class Choice:
    document: int
    answers: dict[int, list[int]]   # question -> systems to show
    value: float
    calibration: bool = False


@dataclass(frozen=True)
class Decision:
    choice: Choice | None
    reason: str | None = None


def decide(situation: Situation, status: Status, rules: Rules, design: Design, rng: random.Random,
           max_answers: int | None = None, estimates: Mapping[int, Reliability] | None = None) -> Decision:
    """What to give this annotator next, or why nothing."""
    me = situation.annotator
    by_document: dict[int, list[Candidate]] = defaultdict(list)
    for candidate in situation.candidates:
        by_document[candidate.document].append(candidate)
    groups = calibration_groups(situation.documents, design.calibration, len(situation.annotators))
    calibration = all_documents(groups)
    read = {d for d, people in situation.given.items() if me in people}
    for document in groups[group_of(me, groups, situation.given)]:
        if document not in read and by_document.get(document):
            answers = {c.question: sorted(c.systems) for c in by_document[document]}
            return Decision(_trimmed(Choice(document, answers, 1.0, calibration=True), max_answers))

    estimates = estimates if estimates is not None else reliabilities(situation.ratings, situation.annotators)
    mine = estimates.get(me)
    if mine is not None and not counts(mine, design.included):
        return Decision(None, NOT_NEEDED)
    beyond = read - calibration
    if design.waiting_for_others and beyond:
        return Decision(None, WAIT)
    if design.cap is not None and len(read) >= design.cap:
        return Decision(None, NOT_NEEDED)

    loads: dict[int, int] = defaultdict(int)
    for people in situation.given.values():
        for person in people:
            loads[person] += 1
    calibrated = [a for a in situation.annotators if is_calibrated(a, groups, situation.given)]
    # The precision a document needs: that of a fixed study's k = REFERENCE_OVERLAP annotators of this pool
    # (each flagged one counted as at least NEAR_RANDOM noise, as a fixed study would have had them read).
    pool = [max(r.noise_variance, NEAR_RANDOM) if r.flag else r.noise_variance
            for a, r in estimates.items() if a in calibrated and r.noise_variance]
    typical = sum(pool) / len(pool) if pool else 1.0
    needed = REFERENCE_OVERLAP / typical
    noise = {a: (estimates[a].noise_variance if a in estimates and estimates[a].noise_variance else typical)
             for a in set(calibrated) | {me}}
    counting = {a for a in noise if a not in estimates or counts(estimates[a], design.included)}
    # Readers already given a document beyond calibration come first, then the most reliable (lowest σ̂²): a
    # refined estimate never hands the rest of the study to someone told earlier they were not needed.
    team = {a for d, people in situation.given.items() if d not in calibration for a in people}
    may_read = {a for a in counting if a in calibrated or a == me}
    may_read = {a for a in may_read if design.cap is None or loads[a] < design.cap}
    order = sorted(may_read, key=lambda a: (a not in team, noise[a], a))

    others = [d.id for d in situation.documents if d.id not in calibration]
    readers_of = {d: {r for r in situation.given.get(d, ()) if r in counting} for d in others}
    spent = sum(len(people) for people in situation.given.values())
    budget = design.readings if design.readings is not None else (
        len(situation.annotators) * design.calibration + design.overlap_target * len(others))
    left = budget - spent

    counted = _counts(situation.ratings, situation.pending)
    open_pairs = status.open_pairs
    active = {s for p in open_pairs for s in (p.higher, p.lower)}
    best: tuple[float, float, Choice] | None = None
    later = False  # a slot this annotator is next in line for, once someone ahead of them has started
    in_line = False  # a document this annotator may read, though nothing on it is worth showing now
    for document, questions in by_document.items():
        if document in calibration:
            continue
        if document not in read:
            readers = readers_of.get(document, set())
            # Readings are spread level by level: a document gets its (r+1)-th reader only while the budget still
            # brings every other document to r readers, so every document is read once before any is read twice.
            level = len(readers)
            reserve = sum(max(0, level - len(readers_of[d])) for d in others if d != document)
            if left - 1 < reserve or (readers and sum(1 / noise[r] for r in readers if r in noise) >= needed):
                continue
            line = [a for a in order if a not in readers]
            if not line or line[0] != me:
                # Next after the first reader of a document nobody has started, with a second reading both affordable
                # and needed: worth asking again soon (WAIT), not turned away.
                later = later or (not readers and len(line) > 1 and line[1] == me and line[0] in noise
                                  and 1 / noise[line[0]] < needed
                                  and left - 1 >= sum(1 for d in others if not readers_of[d]))
                continue
        in_line = True
        answers, value = _answers(questions, open_pairs, active, counted, rules, rng)
        if not answers:
            continue
        choice = _trimmed(Choice(document, answers, value), max_answers)
        if choice is None:
            continue
        cost = READ_AGAIN_COST if document in read else 1.0
        key = (value / cost, rng.random())
        if best is None or key > best[:2]:
            best = (key[0], key[1], choice)
    if best is not None:
        return Decision(best[2])
    if later:
        return Decision(None, WAIT)
    return Decision(None, EXHAUSTED if in_line or not others or not by_document else NOT_NEEDED)


def _counts(ratings: Ratings, pending: Mapping[Cell, int]) -> dict[Cell, int]:
    counted: dict[Cell, int] = defaultdict(int)
    for cell, scores in ratings.items():
        counted[cell] += len(scores)
    for cell, n in pending.items():
        counted[cell] += n  # given to someone, not scored yet: counted as on its way
    return counted


def _answers(questions: Sequence[Candidate], open_pairs, active: set[int], counted: Mapping[Cell, int],
             rules: Rules, rng: random.Random) -> tuple[dict[int, list[int]], float]:
    """The answers worth showing on each of a document's questions, and what they are worth to the open pairs."""
    answers: dict[int, list[int]] = {}
    value = 0.0
    for candidate in questions:
        offered = set(candidate.systems)
        chosen: set[int] = set()
        q_value = 0.0
        for pair in open_pairs:
            if pair.higher in offered and pair.lower in offered:
                seen = min(counted.get((candidate.question, pair.higher), 0),
                           counted.get((candidate.question, pair.lower), 0))
                q_value += pair.ambiguity / (1 + 3 * seen)
        if q_value > 0:
            chosen |= active & offered
        short = [s for s in offered if 0 < counted.get((candidate.question, s), 0) < rules.min_per_answer]
        if short:
            q_value += 0.5 * len(short)
            chosen |= set(short)
        if q_value <= 0 or not chosen:
            continue
        others = sorted(offered - chosen)
        chosen |= set(rng.sample(others, min(FILLERS, len(others))))
        answers[candidate.question] = sorted(chosen)
        value += q_value
    return answers, value


def _trimmed(choice: Choice, limit: int | None) -> Choice | None:
    """Keep whole questions, in order, while they fit in `limit` answers (the budget); None when none fits."""
    if limit is None:
        return choice
    kept, used = {}, 0
    for question, systems in choice.answers.items():
        if used + len(systems) > limit:
            break
        kept[question] = systems
        used += len(systems)
    return Choice(choice.document, kept, choice.value, choice.calibration) if kept else None
