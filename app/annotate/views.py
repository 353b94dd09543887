"""Annotator pages: resume, the question page and the finish page.

Nothing here may reveal a system name: answers reach the template as label and text only.
"""
from __future__ import annotations

from dataclasses import dataclass

from flask import abort, redirect, render_template, url_for
from flask_login import current_user
from sqlalchemy import select

from ..extensions import db
from ..models import Document, Question, Reference
from ..models.corpus import REFERENCE_KINDS, REFERENCE_LABELS
from ..services.annotation.blinding import ensure_view, visible_answers
from ..services.annotation.documents import document_version
from ..services.annotation.rounds import open_round
from ..services.annotation.scoring import RUBRIC, frequencies, scores_by_prediction
from ..services.annotation.workload import load_workload
from . import bp


@dataclass(frozen=True)
class AnswerCard:
    label: str
    text: str
    value: int | None
    comment: str


def _next_question_url(round_id: int) -> str:
    workload = load_workload(round_id)
    slot = workload.first_open()
    if slot is None:
        return url_for("annotate.done")
    return url_for("annotate.question", question_id=slot.question_id)


@bp.get("/")
def resume():
    """Annotators land on their first question with unscored answers; staff on the overview."""
    if current_user.is_staff:
        return redirect(url_for("annotate.overview"))
    return redirect(_next_question_url(open_round(current_user.id).id))


@bp.get("/start")
def start():
    """Go to one's own first unfinished question (staff who score use this)."""
    return redirect(_next_question_url(open_round(current_user.id).id))


@bp.get("/q/<int:question_id>")
def question(question_id: int):
    round_ = open_round(current_user.id)
    workload = load_workload(round_.id)
    slot = workload.slot(question_id)
    if slot is None:
        abort(404)
    view = ensure_view(round_, question_id)
    answers = visible_answers(view)
    scores = scores_by_prediction(round_.id, [a.prediction_id for a in answers])
    cards = [
        AnswerCard(a.label, a.text, scores[a.prediction_id].value if a.prediction_id in scores else None,
                   scores[a.prediction_id].comment if a.prediction_id in scores else "")
        for a in answers
    ]
    item = db.session.execute(
        select(Question.instruction, Document.id, Document.title, Document.task, Document.sha256,
               Document.char_count, Document.word_count)
        .join(Document, Question.document_id == Document.id)
        .where(Question.id == question_id)
    ).one()
    stored = dict(db.session.execute(
        select(Reference.kind, Reference.text).where(Reference.question_id == question_id)
    ).all())
    references = [(REFERENCE_LABELS[kind], stored[kind]) for kind in REFERENCE_KINDS if kind in stored]
    previous, following = workload.neighbours(question_id)
    return render_template(
        "annotate/question.html",
        round=round_, workload=workload, slot=slot, item=item, references=references, answers=cards,
        rubric=RUBRIC, previous=previous, following=following,
        position=workload.position(question_id), document_place=workload.document_place(question_id),
        document_index=workload.document_index(question_id),
        document_url=url_for("annotate.document", document_id=item.id, v=document_version(item.sha256)),
    )


@bp.get("/done")
def done():
    """The finish page: own score frequencies once everything is scored, else what is left."""
    round_ = open_round(current_user.id)
    workload = load_workload(round_.id)
    counts = frequencies(round_.id)
    first_open = workload.first_open()
    return render_template(
        "annotate/done.html", round=round_, workload=workload, counts=counts, rubric=RUBRIC,
        most=max(counts.values()) or 1, first_open=first_open,
    )
