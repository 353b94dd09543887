"""Which calibration document(s) each annotator of an adaptive study reads first.

Each annotator's noise is identified by the method of pairwise differences once three annotators share
the same answers (reliability.py), and it is estimated well once each annotator is compared with four
others. So a large pool need not share one calibration document: it is split into **calibration groups**
of at least MIN_GROUP annotators, each reading its own document(s). Ten annotators calibrate on two
documents, five readers each, instead of all ten on one: the same ten calibration readings cover two of
the study's documents, and each still informs its annotator's estimate. Up to nine annotators form one
group, as before.

An annotator's group is the first one whose documents they were given; a newcomer joins the group with
the fewest members, so the groups stay balanced (if only six of ten listed annotators ever start, each
group still has the three that identify their noise). The groups are worked out from who was given what, so the services and a replay agree.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

MIN_GROUP = 5  # annotators who calibrate on the same document(s): each compared with at least four others


class _Document(Protocol):
    id: int
    words: float
    answers: int


def calibration_documents(documents: Sequence[_Document], count: int) -> list[int]:
    """The documents read first, in order: the fewest answers to score, then the fewest words."""
    return [d.id for d in sorted(documents, key=lambda d: (d.answers, d.words, d.id))[:max(count, 0)]]


def group_count(annotators: int, per_annotator: int, documents: int) -> int:
    """How many calibration groups a pool of this size forms (one below 2 × MIN_GROUP annotators)."""
    groups = annotators // MIN_GROUP
    # Leave at least one document outside calibration.
    most = (documents - 1) // per_annotator if per_annotator > 0 else 1
    return max(1, min(groups, most))


def calibration_groups(documents: Sequence[_Document], per_annotator: int, annotators: int) -> list[list[int]]:
    """Each group's calibration documents (per_annotator of them), the smallest documents first."""
    if per_annotator <= 0:
        return [[]]
    groups = group_count(annotators, per_annotator, len(documents))
    ordered = calibration_documents(documents, groups * per_annotator)
    return [ordered[g * per_annotator:(g + 1) * per_annotator] for g in range(groups)]


def group_of(annotator: int, groups: Sequence[Sequence[int]], given: Mapping[int, frozenset[int] | set[int]]) -> int:
    """The annotator's group: the first whose documents they were given, else the one a newcomer joins."""
    for index, group in enumerate(groups):
        if any(annotator in given.get(d, ()) for d in group):
            return index
    members = [len({a for d in group for a in given.get(d, ())}) for group in groups]
    return min(range(len(groups)), key=lambda g: (members[g], g))


def is_calibrated(annotator: int, groups: Sequence[Sequence[int]],
                  given: Mapping[int, frozenset[int] | set[int]]) -> bool:
    """Whether the annotator was given every document of their calibration group."""
    return all(annotator in given.get(d, ()) for d in groups[group_of(annotator, groups, given)])


def not_calibrated(annotators: Sequence[int], documents: Sequence[_Document], per_annotator: int,
                   given: Mapping[int, frozenset[int] | set[int]]) -> list[int]:
    """Who has not been given every calibration document of their group yet (the start guard waits for them)."""
    groups = calibration_groups(documents, per_annotator, len(annotators))
    return [a for a in annotators if not is_calibrated(a, groups, given)]


def all_documents(groups: Sequence[Sequence[int]]) -> set[int]:
    return {d for group in groups for d in group}
