"""The adaptive policy and stopping rule on small hand-made states (app/core/allocation/)."""
from __future__ import annotations

import random

from app.core.allocation import (
    EXHAUSTED,
    NOT_NEEDED,
    OPEN,
    SEPARATED,
    TIED,
    WAIT,
    Candidate,
    Design,
    Document,
    Rules,
    Situation,
    additive_effects,
    calibration_documents,
    decide,
    study_status,
)
from app.core.allocation.policy import _trimmed

SYSTEMS = [1, 2, 3]
A, B, C = 101, 102, 103  # annotators


def _ratings(per_question: dict[int, dict[int, float]], raters=(A, B)) -> dict:
    """Each cell scored alike by every rater (their noise is not the point here)."""
    return {(q, s): {r: v for r in raters} for q, row in per_question.items() for s, v in row.items()}


def _far_and_close(n: int, raters=(A, B)) -> dict:
    """System 1 far above 2 and 3; 2 and 3 differ by a noisy 0 or 1 (close)."""
    return _ratings({q: {1: 5.0, 2: 2.0 + (q % 2), 3: 2.0 + ((q + 1) % 3 == 0)} for q in range(n)}, raters)


def test_far_pair_is_separated_and_close_pair_open():
    status = study_status(_far_and_close(12), SYSTEMS, Rules())
    assert status.ranking[0] == 1
    first, second = status.pairs
    assert (first.higher, first.state) == (1, SEPARATED)
    assert first.p_value < 0.05 / 2  # Bonferroni over the two adjacent pairs
    assert second.state == OPEN and {second.higher, second.lower} == {2, 3}
    assert not status.settled
    assert "Bonferroni" in status.correction and "paired t test" in status.correction


def test_one_annotator_alone_never_settles_a_pair():
    """An annotator who recognises a system and scores it 5 and the rest 1 settles nothing by themselves."""
    steered = _ratings({q: {1: 5.0, 2: 1.0, 3: 1.0} for q in range(30)}, raters=(A,))
    status = study_status(steered, SYSTEMS, Rules())
    assert status.pairs[0].p_value < 1e-6 and status.pairs[0].state == OPEN
    assert status.pairs[0].raters == (1, 1) and not status.settled
    with_second = {cell: {**scores, B: scores[A]} for cell, scores in steered.items()}
    assert study_status(with_second, SYSTEMS, Rules()).pairs[0].state == SEPARATED


def test_an_open_pair_always_has_questions_left_and_the_estimate_agrees_with_the_test():
    for n in range(3, 40, 3):
        for pair in study_status(_far_and_close(n), SYSTEMS, Rules()).pairs:
            if pair.state == OPEN and pair.questions_left is not None:
                assert pair.questions_left >= 1
            if pair.state != OPEN:
                assert pair.questions_left == 0
    # Where the estimate says k more questions, adding k questions like these settles the pair.
    ratings = _ratings({q: {1: 3.0 + (0.5 if q % 4 else -0.5), 2: 3.0, 3: 1.0} for q in range(8)})
    pair = next(p for p in study_status(ratings, SYSTEMS, Rules()).pairs if {p.higher, p.lower} == {1, 2})
    assert pair.state == OPEN and pair.questions_left
    size = 8 + pair.questions_left
    size += -size % 4  # whole repeats of the pattern: the same mean and nearly the same sd
    grown = _ratings({q: {1: 3.0 + (0.5 if q % 4 else -0.5), 2: 3.0, 3: 1.0} for q in range(size)})
    assert next(p for p in study_status(grown, SYSTEMS, Rules()).pairs if {p.higher, p.lower} == {1, 2}).state \
        == SEPARATED


def test_a_tie_within_the_margin_settles_the_pair():
    rows = {q: {1: 5.0, 2: 3.0, 3: 3.0 + (0.1 if q % 2 else -0.1)} for q in range(30)}
    ratings = _ratings(rows)
    assert study_status(ratings, SYSTEMS, Rules()).pairs[1].state == OPEN
    status = study_status(ratings, SYSTEMS, Rules(tie_margin=0.5))
    assert [p.state for p in status.pairs] == [SEPARATED, TIED] and status.settled


def test_weights_leave_out_a_flagged_annotator():
    ratings = _ratings({q: {1: 4.0, 2: 2.0, 3: 3.0} for q in range(6)}, raters=(A, B))
    for cell in ratings:
        ratings[cell][C] = 3.0  # a constant scorer
    weighted = study_status(ratings, SYSTEMS, Rules(), {A: 1.0, B: 1.0, C: 0.0})
    assert weighted.effects[1] - weighted.effects[2] == 2.0


def test_additive_effects_compare_systems_on_different_questions_fairly():
    means = {(1, 1): 2.0, (1, 2): 1.0, (2, 1): 5.0, (2, 3): 4.0}
    effects = additive_effects(means, [1, 2, 3])
    assert abs(effects[2] - effects[3]) < 1e-6 and effects[1] - effects[2] > 0.99


# --- who reads what -----------------------------------------------------------------------------

DOCS = (Document(1, 900.0, 21), Document(2, 500.0, 21), Document(3, 700.0, 14), Document(4, 800.0, 21))


def _questions(document: int, first: int, count: int) -> list[Candidate]:
    return [Candidate(first + i, document, (1, 2, 3)) for i in range(count)]


QUESTIONS = {1: _questions(1, 10, 3), 2: _questions(2, 20, 3), 3: _questions(3, 30, 2), 4: _questions(4, 40, 3)}


def _situation(me, given, ratings, annotators=(A, B, C)):
    mine = {d for d, people in given.items() if me in people}
    candidates = [c for d, cs in QUESTIONS.items() if d not in mine for c in cs]
    return Situation(me, annotators, DOCS, {d: frozenset(p) for d, p in given.items()}, candidates, ratings)


def _calibrated(noise: dict[int, float], seed: int = 0) -> dict:
    """Scores of document 3 (the calibration document: fewest answers) by every annotator, each with its noise."""
    rng = random.Random(seed)
    ratings = {}
    for q in range(30, 32):
        for s in SYSTEMS:
            truth = 3 + 0.05 * s + (q % 2)
            ratings[(q, s)] = {a: truth + rng.gauss(0, sd) for a, sd in noise.items()}
    # More shared answers than one small document has, so the estimate is steady.
    for q in range(500, 540):
        for s in SYSTEMS:
            truth = 2.5 + 0.05 * s + (q % 3) * 0.5
            ratings[(q, s)] = {a: truth + rng.gauss(0, sd) for a, sd in noise.items()}
    return ratings


def test_calibration_first_the_document_with_fewest_answers_and_every_answer_shown():
    assert calibration_documents(DOCS, 1) == [3]
    assert calibration_documents(DOCS, 2) == [3, 2]
    decision = decide(_situation(A, {}, {}), study_status({}, SYSTEMS, Rules()), Rules(), Design(), random.Random(0))
    assert decision.choice.calibration and decision.choice.document == 3
    assert decision.choice.answers == {30: [1, 2, 3], 31: [1, 2, 3]}


def test_the_most_reliable_annotator_reads_and_the_others_are_not_needed():
    ratings = _calibrated({A: 0.3, B: 1.2, C: 1.5})
    given = {3: {A, B, C}}
    status = study_status(ratings, SYSTEMS, Rules())
    design = Design(readings=3 + 3)  # calibration, then one reading per other document
    assert decide(_situation(B, given, ratings), status, Rules(), design, random.Random(0)).reason in (NOT_NEEDED, WAIT)
    choice = decide(_situation(A, given, ratings), status, Rules(), design, random.Random(0)).choice
    assert choice is not None and choice.document in (1, 2, 4) and not choice.calibration


def test_a_document_read_precisely_enough_gets_no_second_reader():
    ratings = _calibrated({A: 0.2, B: 0.9, C: 1.5})
    status = study_status(ratings, SYSTEMS, Rules())
    given = {3: {A, B, C}, 1: {A}, 2: {A}, 4: {A}}
    decision = decide(_situation(B, given, ratings), status, Rules(), Design(readings=30), random.Random(0))
    assert decision.choice is None and decision.reason == NOT_NEEDED


def test_every_document_is_read_once_before_any_is_read_twice():
    # Noisy enough that one reader falls short of three typical annotators' precision: a second reading helps.
    ratings = _calibrated({A: 0.8, B: 0.85, C: 1.5})
    status = study_status(ratings, SYSTEMS, Rules())
    design = Design(readings=3 + 3)  # calibration, then one reading per other document: none to spare
    given = {3: {A, B, C}, 1: {A}}
    # B may not read document 1 a second time while documents 2 and 4 still need their first reader.
    decision = decide(_situation(B, given, ratings), status, Rules(), design, random.Random(0))
    assert decision.choice is None or decision.choice.document != 1
    design = Design(readings=3 + 4)  # one reading to spare: once every document is read, it goes to a second reader
    given = {3: {A, B, C}, 1: {A}, 2: {A}, 4: {A}}
    decision = decide(_situation(B, given, ratings), status, Rules(), design, random.Random(0))
    assert decision.choice is not None and decision.choice.document in (1, 2, 4)


def test_nobody_runs_ahead_before_the_others_have_calibrated():
    ratings = _calibrated({A: 0.3, B: 0.4, C: 0.5})
    status = study_status(ratings, SYSTEMS, Rules())
    design = Design(readings=20, waiting_for_others=True)
    first = decide(_situation(A, {3: {A}}, ratings), status, Rules(), design, random.Random(0))
    assert first.choice is not None  # one document beyond calibration
    again = decide(_situation(A, {3: {A}, first.choice.document: {A}}, ratings), status, Rules(), design,
                   random.Random(0))
    assert again.choice is None and again.reason == WAIT


def test_a_flagged_annotator_gets_nothing_unless_included_again_and_the_cap_holds():
    ratings = _calibrated({A: 0.3, B: 0.4})
    for cell in ratings:
        ratings[cell][C] = 3.0  # constant
    given = {3: {A, B, C}}
    status = study_status(ratings, SYSTEMS, Rules())
    assert decide(_situation(C, given, ratings), status, Rules(), Design(readings=20), random.Random(0)).reason \
        == NOT_NEEDED
    capped = Design(readings=20, cap=1)
    assert decide(_situation(A, given, ratings), status, Rules(), capped, random.Random(0)).reason == NOT_NEEDED


def test_the_same_seed_gives_the_same_choice():
    ratings = _calibrated({A: 0.3, B: 0.4, C: 0.9})
    status = study_status(ratings, SYSTEMS, Rules())
    situation = _situation(A, {3: {A, B, C}}, ratings)
    choices = {repr(decide(situation, status, Rules(), Design(readings=20), random.Random("seed:7")).choice)
               for _ in range(5)}
    assert len(choices) == 1


def test_a_settled_pair_drops_its_systems_but_a_filler_is_always_shown():
    ratings = _far_and_close(12)
    status = study_status(ratings, SYSTEMS, Rules())
    assert status.pairs[0].state == SEPARATED
    given = {3: {A, B, C}}
    situation = Situation(A, (A, B), DOCS, {3: frozenset({A, B})}, QUESTIONS[1], ratings)
    choice = decide(situation, status, Rules(), Design(calibration=1, readings=20), random.Random(3)).choice
    assert choice is not None and given
    for systems in choice.answers.values():
        assert {2, 3} <= set(systems) and len(systems) == 3  # the open pair, and one settled system beside it


def test_budget_trims_to_whole_questions_and_nothing_left_is_exhausted():
    from app.core.allocation import Choice

    choice = Choice(1, {1: [1, 2, 3], 2: [1, 2, 3], 3: [1, 2, 3]}, 1.0)
    assert sum(len(v) for v in _trimmed(choice, 7).answers.values()) == 6
    assert _trimmed(choice, 2) is None
    empty = Situation(A, (A,), DOCS, {d: frozenset({A}) for d in (1, 2, 3, 4)}, [], {})
    assert decide(empty, study_status({}, SYSTEMS, Rules()), Rules(), Design(), random.Random(0)).reason == EXHAUSTED
