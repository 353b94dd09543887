"""Identical answers from two or more systems, shown once and scored once for all of them.

L-Eval's own subset has 54 questions on which two systems gave the same answer. Shown side by side they
were scored twice, sometimes differently, and the pair told the annotator that two systems agree. With a
study's `merge_identical` on (the default for new studies), the slots of one question whose answers show
the same on the annotator's page (`app.core.text.display_answer`, the one rule, which the study page's list
of identical answers uses too) are one answer there: one slot shows it (see `refresh`), and each other slot is
its twin (`StudyAnswer.twin_of_id`). The page, its progress and its saves know only the slot shown
(`membership.ON_PAGE`); a score given there is recorded for every twin as well, in the same transaction,
as a score of that system's own answer version with `Score.copied_from_id` naming the score given. So every
system has the score once, results count it once per system, and exports say which scores were one.

A score given on a twin's own slot (before it became one, or while the option was off) is never
overwritten by a copy. When twins part (an answer moves to a new version, a system leaves, the option is
turned off), the copies stay: each was recorded for the exact text it stands beside.

Blinding: the annotator learns nothing the page does not show. A question with twins simply has fewer
answers, as it would if a system had not answered; no label, count, note, id or hash says that an answer
stands for several systems, and which slot shows it follows the slots' ids and scores, which never reach the
browser.
"""
from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import aliased

from app.core.text import display_answer
from app.extensions import db
from app.models import AnnotationRound, Answer, Score, ScoreRevision, Study, StudyAllocation, StudyAnswer, System
from app.services.data_versions import note_written


class Given(NamedTuple):
    """A score as recorded: the one given on the page, or a copy of it."""

    id: int
    round_id: int
    annotator_id: int
    value: int | None
    comment: str
    label: str
    seconds: float
    created_at: object
    updated_at: object
    copied_from_id: int | None


_GIVEN_COLUMNS = (Score.id, Score.round_id, Score.annotator_id, Score.value, Score.comment, Score.answer_label,
                  Score.seconds_spent, Score.created_at, Score.updated_at, Score.copied_from_id)


def shows_as(text: str) -> str:
    """The text an answer shows on the annotator's page: two answers are identical when these are equal."""
    return display_answer(text)


def refresh(study: Study) -> int:
    """Pair each slot the study shows with the slot of its question that shows its text for it, or with none;
    record the scores already given for the new twins. Returns how many slots are twins. Called wherever the
    answers a study shows change (setup, answers, references).

    Of the slots that show the same, the one shown is the one already on the page (a group stays as it was),
    else one with scores given on it (so no annotator's page loses an answer they scored), else one an adaptive
    study has given out (services/studies/allocation.py gives a twin's answer as the slot shown), else the lowest id."""
    rows = db.session.execute(
        select(StudyAnswer.id, StudyAnswer.question_id, StudyAnswer.excluded, StudyAnswer.twin_of_id,
               StudyAnswer.answer_id, Answer.text)
        .join(Answer, Answer.id == StudyAnswer.answer_id).where(StudyAnswer.study_id == study.id)
        .order_by(StudyAnswer.id)).all()
    groups: dict[tuple[int, str], list] = defaultdict(list)
    wanted: dict[int, int | None] = {}
    for row in rows:
        wanted[row.id] = None
        shown = shows_as(row.text)
        if study.merge_identical and not row.excluded and shown:
            groups[(row.question_id, shown)].append(row)
    shared = [group for group in groups.values() if len(group) > 1]
    given = _given_on(study.id, [row.answer_id for group in shared for row in group])
    handed = set(db.session.scalars(select(StudyAllocation.study_answer_id).where(
        StudyAllocation.study_id == study.id, StudyAllocation.study_answer_id.in_([r.id for g in shared for r in g]))))
    for group in shared:
        first = min(group, key=lambda row: (row.twin_of_id is not None, not given.get(row.answer_id),
                                            row.id not in handed, row.id))
        for row in group:
            if row.id != first.id:
                wanted[row.id] = first.id
    for row in rows:
        if row.twin_of_id != wanted[row.id]:
            db.session.execute(update(StudyAnswer).where(StudyAnswer.id == row.id).values(twin_of_id=wanted[row.id]))
    db.session.flush()
    _record_given_scores(study.id)
    return sum(1 for twin in wanted.values() if twin is not None)


def _given_on(study_id: int, answer_ids: list[int]) -> dict[int, int]:
    """{answer: scores given on it (not recorded from another) in the study's rounds}."""
    if not answer_ids:
        return {}
    return dict(db.session.execute(
        select(Score.answer_id, func.count(Score.id)).join(AnnotationRound, AnnotationRound.id == Score.round_id)
        .where(AnnotationRound.study_id == study_id, Score.answer_id.in_(answer_ids), Score.copied_from_id.is_(None),
               Score.value.is_not(None)).group_by(Score.answer_id)).all())


def _pairs(study_id: int, shown_slot: int | None = None) -> list[tuple[int, int, str]]:
    """(shown answer, twin's answer, twin's sha256) for the study's twins (of one shown slot)."""
    twin, shown, text = aliased(StudyAnswer), aliased(StudyAnswer), aliased(Answer)
    stmt = (select(shown.answer_id, twin.answer_id, text.sha256).select_from(twin)
            .join(shown, shown.id == twin.twin_of_id).join(text, text.id == twin.answer_id)
            .where(twin.study_id == study_id, twin.excluded.is_(False)))
    if shown_slot is not None:
        stmt = stmt.where(shown.id == shown_slot)
    return list(db.session.execute(stmt))


def _record_given_scores(study_id: int) -> int:
    """Record every score given on a shown slot for its twins, in every round of the study; returns rows written."""
    pairs = _pairs(study_id)
    if not pairs:
        return 0
    answers = {a for pair in pairs for a in pair[:2]}
    rounds = select(AnnotationRound.id).where(AnnotationRound.study_id == study_id)
    scores: dict[tuple[int, int], Given] = {}
    for row in db.session.execute(select(Score.answer_id, *_GIVEN_COLUMNS)
                                  .where(Score.round_id.in_(rounds), Score.answer_id.in_(answers))):
        scores[(row[2], row[0])] = Given(*row[1:])
    twins_of: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for shown, twin, sha in pairs:
        twins_of[shown].append((twin, sha))
    written = 0
    for (round_id, answer_id), given in list(scores.items()):
        for twin, sha in twins_of.get(answer_id, []):
            written += _record(given, twin, sha, scores.get((round_id, twin)))
    return written


def record_for_twins(round_id: int, shown_slot: int, answer_id: int) -> int:
    """After a save on the page: record the round's score of the shown slot's answer for each of its twins."""
    pairs = _pairs_of_slot(shown_slot)
    if not pairs:
        return 0
    wanted = [answer_id] + [twin for twin, _ in pairs]
    scores = {row[0]: Given(*row[1:]) for row in db.session.execute(
        select(Score.answer_id, *_GIVEN_COLUMNS).where(Score.round_id == round_id, Score.answer_id.in_(wanted)))}
    given = scores.get(answer_id)
    if given is None:
        return 0
    return sum(_record(given, twin, sha, scores.get(twin)) for twin, sha in pairs)


def _pairs_of_slot(shown_slot: int) -> list[tuple[int, str]]:
    """(answer, sha256) of the twins a shown slot shows for (none for most slots: one indexed read)."""
    return list(db.session.execute(
        select(StudyAnswer.answer_id, Answer.sha256).join(Answer, Answer.id == StudyAnswer.answer_id)
        .where(StudyAnswer.twin_of_id == shown_slot, StudyAnswer.excluded.is_(False))))


def _record(given: Given, answer_id: int, sha256: str, current: Given | None) -> int:
    """Make the twin's score in the round say what the given one says (with a revision); a score given on the
    twin itself is left as it is. Returns 1 when a row was written."""
    source = given.copied_from_id or given.id
    if current is not None and current.copied_from_id is None:
        return 0  # given on the twin's own slot: never overwritten
    if current is not None and (current.value, current.comment, current.copied_from_id) == (
            given.value, given.comment, source):
        return 0
    if current is None and given.value is None:
        return 0  # a cleared score with nothing recorded for the twin yet
    if current is None:
        score_id = db.session.execute(insert(Score).returning(Score.id).values(
            round_id=given.round_id, annotator_id=given.annotator_id, answer_id=answer_id, answer_sha256=sha256,
            value=given.value, comment=given.comment, answer_label=given.label, seconds_spent=given.seconds,
            created_at=given.created_at, updated_at=given.updated_at, copied_from_id=source)).scalar_one()
        old_value, old_comment = None, None
    else:
        score_id, old_value, old_comment = current.id, current.value, current.comment
        db.session.execute(update(Score).where(Score.id == score_id).values(
            value=given.value, comment=given.comment, answer_label=given.label, seconds_spent=given.seconds,
            updated_at=given.updated_at, copied_from_id=source))
    db.session.execute(insert(ScoreRevision).values(
        score_id=score_id, old_value=old_value, new_value=given.value, old_comment=old_comment,
        new_comment=given.comment, changed_at=given.updated_at))
    note_written(Score.__tablename__, ScoreRevision.__tablename__)
    return 1


def twin_groups(study_id: int) -> dict[int, list[int]]:
    """{shown slot: [its twins' slots]} of the study."""
    groups: dict[int, list[int]] = defaultdict(list)
    for slot, shown in db.session.execute(select(StudyAnswer.id, StudyAnswer.twin_of_id).where(
            StudyAnswer.study_id == study_id, StudyAnswer.twin_of_id.is_not(None), StudyAnswer.excluded.is_(False))):
        groups[shown].append(slot)
    return dict(groups)


def scored_once_for(study_id: int) -> dict[int, str]:
    """{score given: "sys-a; sys-b"}: the systems each score given on a page showing identical answers once was
    recorded for (exports say so on every one of those rows); scores recorded for one system are not in it."""
    copies = list(db.session.execute(select(Score.copied_from_id, Answer.system_id).join(
        Answer, Answer.id == Score.answer_id).join(AnnotationRound, AnnotationRound.id == Score.round_id).where(
        AnnotationRound.study_id == study_id, Score.copied_from_id.is_not(None))))
    if not copies:
        return {}
    sources = {source for source, _ in copies}
    systems: dict[int, set[int]] = defaultdict(set)
    for source, system_id in copies:
        systems[source].add(system_id)
    for source, system_id in db.session.execute(select(Score.id, Answer.system_id).join(
            Answer, Answer.id == Score.answer_id).where(Score.id.in_(sources))):
        systems[source].add(system_id)
    names = dict(db.session.execute(select(System.id, System.name).where(
        System.id.in_({s for ids in systems.values() for s in ids}))).all())
    return {source: "; ".join(sorted(names[s] for s in ids)) for source, ids in systems.items()}


def link_recorded(groups: list[list[int]], study_id: int) -> None:
    """Mark groups of scores read back from an export (each one score recorded for several systems): the score
    on the slot the page shows is the one given, the others its copies (else the first, by id)."""
    on_page = set(db.session.scalars(select(StudyAnswer.answer_id).where(
        StudyAnswer.study_id == study_id, StudyAnswer.twin_of_id.is_(None))))
    for ids in groups:
        if len(ids) < 2:
            continue
        answers = dict(db.session.execute(select(Score.id, Score.answer_id).where(Score.id.in_(ids))).all())
        source = min(ids, key=lambda score_id: (answers.get(score_id) not in on_page, score_id))
        # updated_at as it was: a mark, not a change of the score (the column's onupdate would move it).
        db.session.execute(update(Score).where(Score.id.in_([i for i in ids if i != source]))
                           .values(copied_from_id=source, updated_at=Score.updated_at))
        db.session.execute(update(Score).where(Score.id == source).values(copied_from_id=None,
                                                                            updated_at=Score.updated_at))
    db.session.flush()


def summary(study: Study) -> dict:
    """What the results export says about identical answers: the option, and how many were shown once."""
    groups = twin_groups(study.id)
    questions = set(db.session.scalars(select(StudyAnswer.question_id).where(StudyAnswer.id.in_(list(groups)))))
    return {"shown_once": bool(study.merge_identical),
            "answers_shown_through_another": sum(len(slots) for slots in groups.values()),
            "questions": len(questions),
            "note": "Identical answers of several systems to one question were shown once and scored once; the "
                    "score counts once for each of those systems (the scores export names them: shown_once_for)."
            if study.merge_identical else "Identical answers of several systems were shown and scored apart."}
