"""Who scores what: a study's annotators, its overlap k, and the one rule every annotator page and save obeys.

A study is open to every account (everyone_may_score) or to the accounts it lists; a study that
lists nobody and is not open to everyone is open to nobody. With no overlap set, every annotator
of the study scores every answer. With overlap k, each **document**, with all its questions, goes to k
of the study's annotators (core/allocation/sharing.py: reading is the cost, so k readings a document),
balancing the words each reads; ties go by the study's secret seed, so nobody can tell from the plan
whose documents are whose. Rebalancing (an annotator added or removed) moves whole documents and keeps
every annotator on every question they already scored.

An adaptive study (allocation "adaptive") gives no question in advance: services/studies/allocation.py
gives each annotator, on request, a document's questions and on each only some of its answers;
those questions are in the annotator's share, and `answer_in_share` says which of their answers.

The rule is written once, as SQL conditions (`scores_in`, `in_share`, `may_score`, `answer_in_share`), so that the
pages, the save endpoint (in its single query), the document panel and the study list all ask the
same question.
"""
from __future__ import annotations

import random
import secrets
from collections import defaultdict

from sqlalchemy import ColumnElement, and_, delete, exists, func, or_, select
from sqlalchemy.orm import aliased

from app.core.allocation import reading_load, share_documents
from app.extensions import db
from app.models import (
    COUNTED,
    AnnotationRound,
    Answer,
    Document,
    Question,
    Score,
    Study,
    StudyAnnotator,
    StudyAnswer,
    StudyAllocation,
    StudyAssignment,
    StudyQuestion,
    User,
)
from app.services.studies.membership import SHOWN

OPEN = "open"
ADAPTIVE = "adaptive"


class AssignmentError(ValueError):
    """An overlap that the study's annotators cannot satisfy."""


def annotator_ids(study_id: int) -> list[int]:
    """The accounts the study lists (read with everyone_may_score: [] on a restricted study means nobody)."""
    return list(db.session.scalars(select(StudyAnnotator.user_id).where(StudyAnnotator.study_id == study_id)
                                   .order_by(StudyAnnotator.user_id)))


# The conditions take values, bind parameters or columns of the enclosing query. They read every
# table through aliases of their own, so that any query may use them without its own tables being
# correlated into them.


def scores_in(study_id, user_id) -> ColumnElement[bool]:
    """True when the account scores in the study now: it is open, and open to every account or lists this one."""
    study, listed = aliased(Study), aliased(StudyAnnotator)
    on_list = exists().where(listed.study_id == study.id, listed.user_id == user_id)
    return exists().where(study.id == study_id, study.status == OPEN,
                          or_(study.everyone_may_score.is_(True), on_list))


def in_share(study_id, user_id, question_id) -> ColumnElement[bool]:
    """True when the question is the account's to score in the study: one of the study's questions, and
    with an overlap, one assigned to the account."""
    study, asked, given = aliased(Study), aliased(StudyQuestion), aliased(StudyAssignment)
    in_study = exists().where(asked.study_id == study_id, asked.question_id == question_id)
    unlimited = exists().where(study.id == study_id, study.overlap.is_(None), study.allocation != ADAPTIVE)
    assigned = exists().where(given.study_id == study_id, given.user_id == user_id, given.question_id == question_id)
    return and_(in_study, or_(unlimited, assigned))


def answer_in_share(study_id, user_id, study_answer_id) -> ColumnElement[bool]:
    """True when the answer slot is the account's to score, on a question in its share: every shown answer
    of a fixed study; in an adaptive study only the answers given to the account."""
    study, given = aliased(Study), aliased(StudyAllocation)
    fixed = exists().where(study.id == study_id, study.allocation != ADAPTIVE)
    allotted = exists().where(given.study_id == study_id, given.user_id == user_id,
                              given.study_answer_id == study_answer_id)
    return or_(fixed, allotted)


def may_score(study_id, user_id, question_id) -> ColumnElement[bool]:
    """The whole rule for one question: the account scores in the open study, and the question is in its share."""
    return and_(scores_in(study_id, user_id), in_share(study_id, user_id, question_id))


def may_annotate(study: Study, user: User) -> bool:
    """Tell whether this account scores in this study now (an open study it may score in)."""
    return bool(db.session.scalar(select(scores_in(study.id, user.id))))


def may_score_question(study_id: int, user_id: int, question_id: int) -> bool:
    """Tell whether this account may score this question of this study now (its answers shown aside)."""
    return bool(db.session.scalar(select(may_score(study_id, user_id, question_id))))


def assigned_questions(study: Study, user_id: int) -> set[int]:
    """The study's questions in this annotator's share (all of them without an overlap)."""
    return set(db.session.scalars(select(StudyQuestion.question_id).where(
        StudyQuestion.study_id == study.id, in_share(study.id, user_id, StudyQuestion.question_id))))


def _scored_pairs(study_id: int) -> set[tuple[int, int]]:
    """(annotator, question) pairs with at least one score in the study."""
    return set(db.session.execute(
        select(AnnotationRound.annotator_id, Answer.question_id).distinct()
        .join(Score, Score.round_id == AnnotationRound.id).join(Answer, Answer.id == Score.answer_id)
        .where(AnnotationRound.study_id == study_id, COUNTED)
    ).all())


def study_documents(study_id: int) -> dict[int, list[int]]:
    """{document: its questions in the study, in the study's order}, documents in the order of their first question."""
    documents: dict[int, list[int]] = {}
    for question_id, document_id in db.session.execute(
        select(StudyQuestion.question_id, Question.document_id).join(Question, Question.id == StudyQuestion.question_id)
        .where(StudyQuestion.study_id == study_id).order_by(StudyQuestion.position)
    ):
        documents.setdefault(document_id, []).append(question_id)
    return documents


def reading_loads(document_ids) -> dict[int, float]:
    """Each document's reading load (words, CJK characters at their reading rate)."""
    return {d: reading_load(words, chars) for d, words, chars in db.session.execute(
        select(Document.id, Document.word_count, Document.char_count).where(Document.id.in_(list(document_ids))))}


def study_rng(study: Study) -> random.Random:
    """The study's own random choices, from its secret seed (drawn once if a study has none yet)."""
    if not study.allocation_seed:
        study.allocation_seed = secrets.token_hex(16)
    return random.Random(study.allocation_seed)


def rebalance(study: Study) -> dict[int, int]:
    """Give each document, with all its questions, to `overlap` annotators balanced by reading; return
    {annotator id: documents}. Annotators keep every question they scored (and, up to k of them, its document).

    An adaptive study's documents are given one request at a time (allocation.py): nothing to share out.
    """
    study.shared_by_document = True
    if study.allocation == ADAPTIVE:
        return {}
    if study.overlap is None:
        db.session.execute(delete(StudyAssignment).where(StudyAssignment.study_id == study.id))
        return {}
    people = annotator_ids(study.id)
    if len(people) < study.overlap:
        raise AssignmentError(f"overlap {study.overlap} needs at least {study.overlap} annotators in the study; "
                              f"it has {len(people)}")
    documents = study_documents(study.id)
    document_of = {q: d for d, questions in documents.items() for q in questions}
    scored = _scored_pairs(study.id)
    work: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))  # document -> annotator -> scored
    for user_id, question_id in scored:
        if question_id in document_of and user_id in people:
            work[document_of[question_id]][user_id] += 1
    keep = {d: sorted(by_user, key=lambda u: (-by_user[u], u)) for d, by_user in work.items()}
    plan = share_documents(reading_loads(documents), people, study.overlap, study_rng(study), keep)
    rows = {(user_id, question_id) for document, users in plan.items() for user_id in users
            for question_id in documents[document]}
    rows |= {(u, q) for u, q in scored if q in document_of and u in people}  # nothing scored moves
    db.session.execute(delete(StudyAssignment).where(StudyAssignment.study_id == study.id))
    for user_id, question_id in sorted(rows):
        db.session.add(StudyAssignment(study_id=study.id, user_id=user_id, question_id=question_id))
    db.session.flush()
    load: dict[int, int] = dict.fromkeys(people, 0)
    for users in plan.values():
        for user_id in users:
            load[user_id] += 1
    return load


def share_out_migrated() -> list[str]:
    """Share out by document every fixed study shared by question before the upgrade; return their names."""
    names = []
    for study in db.session.scalars(select(Study).where(Study.shared_by_document.is_(False))):
        rebalance(study)
        names.append(study.name)
    return names
