"""The allocation policy and stopping rule on small hand-made states (app/core/allocation.py)."""
from __future__ import annotations

import random

from app.core.allocation import (
    OPEN,
    SEPARATED,
    TIED,
    Candidate,
    Rules,
    additive_effects,
    choose,
    study_status,
    within_balance,
)

SYSTEMS = [1, 2, 3]


def _ratings(per_question: dict[int, dict[int, float]]) -> dict:
    return {(q, s): [v] for q, row in per_question.items() for s, v in row.items()}


def _far_and_close(n: int) -> dict:
    """System 1 far above 2 and 3; 2 and 3 differ by a noisy 0 or 1 (close)."""
    rows = {}
    for q in range(n):
        rows[q] = {1: 5.0, 2: 2.0 + (q % 2), 3: 2.0 + ((q + 1) % 3 == 0)}
    return _ratings(rows)


def test_far_pair_is_separated_and_close_pair_open():
    status = study_status(_far_and_close(12), SYSTEMS, Rules())
    assert status.ranking[0] == 1
    first, second = status.pairs
    assert (first.higher, first.state) == (1, SEPARATED)
    assert first.p_value < 0.05 / 2  # Bonferroni over the two adjacent pairs
    assert second.state == OPEN and {second.higher, second.lower} == {2, 3}
    assert not status.settled
    assert "Bonferroni" in status.correction


def test_the_policy_picks_the_close_pair_not_the_settled_one():
    ratings = _far_and_close(12)
    status = study_status(ratings, SYSTEMS, Rules())
    # Two new documents: one question each, all three systems answer.
    candidates = [Candidate(100, 10, (1, 2, 3)), Candidate(101, 11, (1, 2, 3))]
    choice = choose(status, ratings, candidates, set(), Rules(), random.Random(1))
    assert choice is not None
    for systems in choice.answers.values():
        assert {2, 3} <= set(systems)
    assert choice.pairs == [(status.pairs[1].higher, status.pairs[1].lower)]


def test_a_new_question_beats_a_repeat_and_a_read_document_is_cheaper():
    ratings = _far_and_close(12)
    status = study_status(ratings, SYSTEMS, Rules())
    repeat = Candidate(0, 1, (1, 2, 3))      # question 0 already rated for every system
    fresh = Candidate(200, 2, (1, 2, 3))
    choice = choose(status, ratings, [repeat, fresh], set(), Rules(), random.Random(0))
    assert choice.document == 2
    # The same fresh question on a document the annotator already read wins over one unread.
    other = Candidate(201, 3, (1, 2, 3))
    choice = choose(status, ratings, [fresh, other], {3}, Rules(), random.Random(0))
    assert choice.document == 3


def test_one_reading_serves_every_question_of_the_document_that_matters():
    ratings = _far_and_close(12)
    status = study_status(ratings, SYSTEMS, Rules())
    candidates = [Candidate(300 + i, 7, (1, 2, 3)) for i in range(4)]
    choice = choose(status, ratings, candidates, set(), Rules(), random.Random(0))
    assert sorted(choice.answers) == [300, 301, 302, 303]


def test_a_filler_means_the_shown_answers_are_never_exactly_the_contended_pair():
    ratings = _far_and_close(12)
    status = study_status(ratings, SYSTEMS, Rules())
    rng = random.Random(5)
    for i in range(20):
        choice = choose(status, ratings, [Candidate(400 + i, 9, (1, 2, 3))], set(), Rules(), rng)
        assert choice.answers[400 + i] == [1, 2, 3]


def test_a_tie_within_the_margin_settles_the_pair_and_the_study_stops():
    rows = {q: {1: 5.0, 2: 3.0, 3: 3.0 + (0.1 if q % 2 else -0.1)} for q in range(30)}
    ratings = _ratings(rows)
    no_margin = study_status(ratings, SYSTEMS, Rules())
    assert no_margin.pairs[1].state == OPEN and not no_margin.settled
    status = study_status(ratings, SYSTEMS, Rules(tie_margin=0.5))
    assert [p.state for p in status.pairs] == [SEPARATED, TIED]
    assert status.settled
    assert choose(status, ratings, [Candidate(999, 1, (1, 2, 3))], set(), Rules(tie_margin=0.5),
                  random.Random(0)) is None


def test_nothing_rated_leaves_every_pair_open_with_full_ambiguity():
    status = study_status({}, SYSTEMS, Rules())
    assert [p.state for p in status.pairs] == [OPEN, OPEN]
    assert all(p.ambiguity == 1.0 and p.questions_left is None for p in status.pairs)
    choice = choose(status, {}, [Candidate(1, 1, (1, 2, 3))], set(), Rules(), random.Random(0))
    assert choice.answers == {1: [1, 2, 3]}


def test_questions_left_shrinks_as_evidence_grows():
    few = study_status(_far_and_close(6), SYSTEMS, Rules()).pairs[1]
    assert few.state == OPEN and few.questions_left is not None and few.questions_left > 0


def test_additive_effects_compare_systems_on_different_questions_fairly():
    # System 2 was only scored on a hard question, system 3 only on an easy one; both sit 1 below system 1.
    means = {(1, 1): 2.0, (1, 2): 1.0, (2, 1): 5.0, (2, 3): 4.0}
    effects = additive_effects(means, [1, 2, 3])
    assert abs(effects[2] - effects[3]) < 1e-6
    assert effects[1] - effects[2] > 0.99


def test_cells_short_of_the_minimum_per_answer_are_completed():
    ratings = {(5, 1): [4.0]}  # one rating of system 1 on question 5; the others none
    status = study_status(ratings, SYSTEMS, Rules(min_per_answer=2))
    choice = choose(status, ratings, [Candidate(5, 1, (1, 2, 3))], set(), Rules(min_per_answer=2), random.Random(0))
    assert 1 in choice.answers[5]


def test_budget_trims_to_whole_questions():
    status = study_status({}, SYSTEMS, Rules())
    candidates = [Candidate(q, 1, (1, 2, 3)) for q in range(3)]
    choice = choose(status, {}, candidates, set(), Rules(), random.Random(0), max_answers=7)
    assert sum(len(v) for v in choice.answers.values()) == 6


def test_balance_tolerance():
    assert within_balance({1: 2, 2: 0}, 1, tolerance=2) is False
    assert within_balance({1: 1, 2: 0}, 1, tolerance=2) is True
    assert within_balance({1: 5}, 1) is True  # alone: nobody to wait for
