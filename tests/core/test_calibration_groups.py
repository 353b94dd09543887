"""Calibration groups (app/core/allocation/calibration.py): a pool of ten or more annotators calibrates on
several documents, at least five annotators on each, and the policy gives each annotator their group's."""
from __future__ import annotations

import random

from app.core.allocation import Candidate, Design, Document, Rules, Situation, decide, study_status
from app.core.allocation.calibration import calibration_groups, group_count, group_of, is_calibrated

# Six documents; the fewest answers first: 6, then 5 (fewer words than 2), then 2, 3, 4, 1.
DOCS = (Document(1, 900.0, 40), Document(2, 800.0, 20), Document(3, 700.0, 30), Document(4, 600.0, 35),
        Document(5, 500.0, 20), Document(6, 400.0, 10))
SYSTEMS = (1, 2, 3)


def test_up_to_nine_annotators_share_one_calibration_document_and_ten_form_two_groups():
    assert [group_count(n, 1, len(DOCS)) for n in (1, 3, 5, 9, 10, 14, 15, 20)] == [1, 1, 1, 1, 2, 2, 3, 4]
    assert calibration_groups(DOCS, 1, 9) == [[6]]
    assert calibration_groups(DOCS, 1, 10) == [[6], [5]]
    assert calibration_groups(DOCS, 2, 10) == [[6, 5], [2, 3]]
    # At least one document is left outside calibration, however large the pool.
    assert calibration_groups(DOCS, 2, 40) == [[6, 5], [2, 3]]
    assert calibration_groups(DOCS, 1, 40) == [[6], [5], [2], [3], [4]]


def test_newcomers_join_the_smaller_group_and_an_annotator_keeps_their_group():
    groups = [[6], [5]]
    given: dict[int, set[int]] = {}
    order = []
    for annotator in range(100, 112):
        group = group_of(annotator, groups, given)
        order.append(group)
        given.setdefault(groups[group][0], set()).add(annotator)
    assert order == [0, 1] * 6  # balanced: if only six ever start, each group still has three
    # Someone given a document of group 1 is in group 1 whatever the counts say.
    assert group_of(100, [[6], [5]], {5: {100}}) == 1
    assert is_calibrated(100, [[6], [5]], {5: {100}}) and is_calibrated(100, [[6], [5]], {6: {100}})
    # Two calibration documents each: calibrated once given both of their group's.
    two = [[6, 5], [2, 3]]
    assert not is_calibrated(100, two, {6: {100}}) and is_calibrated(100, two, {6: {100}, 5: {100}})
    assert not is_calibrated(100, two, {}) and not is_calibrated(100, two, {2: {101}})


def _situation(me, annotators, given):
    mine = {d for d, people in given.items() if me in people}
    candidates = [Candidate(10 * d + i, d, SYSTEMS) for d in range(1, 7) if d not in mine for i in range(2)]
    return Situation(me, tuple(annotators), DOCS, {d: frozenset(p) for d, p in given.items()}, candidates, {})


def test_the_policy_gives_the_sixth_of_ten_annotators_the_second_calibration_document():
    annotators = list(range(1, 11))
    status = study_status({}, list(SYSTEMS), Rules())
    given = {6: set(annotators[:5])}
    decision = decide(_situation(6, annotators, given), status, Rules(), Design(), random.Random(0))
    assert decision.choice is not None and decision.choice.calibration and decision.choice.document == 5
    # With nine annotators there is one group: the sixth joins the first document.
    decision = decide(_situation(6, annotators[:9], given), status, Rules(), Design(), random.Random(0))
    assert decision.choice.calibration and decision.choice.document == 6


def test_another_groups_calibration_document_is_never_given_as_a_study_document():
    annotators = list(range(1, 11))
    given = {6: set(annotators[:5]), 5: set(annotators[5:])}
    status = study_status({}, list(SYSTEMS), Rules())
    for me in annotators:
        decision = decide(_situation(me, annotators, given), status, Rules(), Design(readings=40), random.Random(0))
        assert decision.choice is None or decision.choice.document not in (5, 6)


def test_the_start_guard_waits_for_those_not_given_their_own_group_s_documents():
    from app.core.allocation import not_calibrated

    annotators = list(range(1, 11))
    given = {6: {1, 2, 3, 4, 5}, 5: {6, 7, 8}}  # 9 and 10 have not started; group 1 has room for them
    assert not_calibrated(annotators, DOCS, 1, given) == [9, 10]
    assert not_calibrated(annotators[:9], DOCS, 1, given) == [6, 7, 8, 9]  # nine: one group, on document 6
