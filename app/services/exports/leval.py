"""L-Eval's per-annotator human-evaluation layout (`files_from_<name>.jsonl`).

L-Eval's web_human_eval.py writes one JSON line per long document: the list
keys `instructions`, `outputs`, `gpt4_outputs`, `claude_outputs` and one
`<model>_pred` list per system, each answer followed by SCORE_SEPARATOR and the
score typed by the annotator, then `evaluation`, `input` and `source`. An
answer without the separator was not scored. The reference lists are written
without scores: here they are references, not answers under evaluation.
"""
from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from sqlalchemy import func, select

from app.extensions import db
from app.models import (
    COUNTED,
    AnnotationRound,
    Answer,
    Document,
    Question,
    Reference,
    Score,
    StudyQuestion,
    StudySystem,
    System,
    User,
)
from app.services.importers.documents import REFERENCE_KEYS
from app.services.studies.membership import is_current_condition, shown_answers

SCORE_SEPARATOR = "\n ---------------------- Your Score (1~5) ----------------------\n"
FILENAME_RE = re.compile(r"^files_from_(?P<name>.+?)(?:\.evaled)?\.jsonl$")
PRED_SUFFIX = "_pred"


def leval_filename(annotator: str) -> str:
    return f"files_from_{annotator}.jsonl"


def annotator_from_filename(filename: str) -> str | None:
    """Read the annotator's name from `files_from_<name>.jsonl`, or None."""
    match = FILENAME_RE.match(filename)
    return match.group("name") if match else None


def pred_keys(systems: list[System]) -> dict[int, str]:
    """Give each system its `<model>_pred` key: the key of its files, unless another system shares it."""
    counts: dict[str, int] = defaultdict(int)
    for system in systems:
        counts[system.pred_key] += 1
    return {
        system.id: system.pred_key
        if system.pred_key.endswith(PRED_SUFFIX) and counts[system.pred_key] == 1
        else f"{system.name}{PRED_SUFFIX}"
        for system in systems
    }


def latest_round(study_id: int, user_id: int) -> AnnotationRound | None:
    return db.session.scalars(
        select(AnnotationRound).where(AnnotationRound.study_id == study_id, AnnotationRound.annotator_id == user_id)
        .order_by(AnnotationRound.number.desc()).limit(1)
    ).first()


def study_systems(study_id: int) -> list[System]:
    """The study's systems, by name (the ones a line lists answers for)."""
    return list(db.session.scalars(select(System).join(StudySystem, StudySystem.system_id == System.id)
                                   .where(StudySystem.study_id == study_id).order_by(System.name)))


def leval_lines(study_id: int, annotator: str) -> list[dict[str, Any]]:
    """Return the annotator's latest round in a study in L-Eval's layout: one line per document they scored.

    Each `<model>_pred` list holds the answer versions the study shows; L-Eval's layout has no
    place for a version, so scores of versions the study no longer shows (stale) are left to the
    jsonl and csv exports.
    """
    user = db.session.scalars(select(User).where(User.username == annotator)).first()
    if user is None:
        raise LookupError(f"no annotator named {annotator!r}")
    current = latest_round(study_id, user.id)
    if current is None:
        return []
    scores = dict(db.session.execute(
        select(Score.answer_id, Score.value).where(Score.round_id == current.id, COUNTED)).all())
    systems = study_systems(study_id)
    keys = pred_keys(systems)
    answers: dict[int, dict[int, Answer]] = defaultdict(dict)  # question id -> system id -> answer shown
    for answer in db.session.scalars(shown_answers(study_id, Answer)):
        answers[answer.question_id][answer.system_id] = answer
    questions: dict[int, list[Question]] = defaultdict(list)
    for question in db.session.scalars(
        select(Question).join(StudyQuestion, StudyQuestion.question_id == Question.id)
        .where(StudyQuestion.study_id == study_id).order_by(Question.document_id, Question.position)
    ):
        questions[question.document_id].append(question)
    references: dict[int, dict[str, str]] = defaultdict(dict)
    for question_id, kind, text in db.session.execute(
        select(Reference.question_id, Reference.kind, Reference.text)
        .join(StudyQuestion, StudyQuestion.question_id == Reference.question_id).where(StudyQuestion.study_id == study_id)
    ):
        references[question_id][kind] = text

    lines = []
    for document in db.session.scalars(select(Document).where(Document.id.in_(list(questions))).order_by(Document.id)):
        asked = questions[document.id]
        given = [answers[q.id].get(s.id) for q in asked for s in systems]
        if not any(a is not None and a.id in scores for a in given):
            continue
        line: dict[str, Any] = {"instructions": [q.instruction for q in asked], "outputs": [q.reference for q in asked]}
        for kind, key in REFERENCE_KEYS.items():
            if kind != "human" and any(kind in references[q.id] for q in asked):
                line[key] = [references[q.id].get(kind, "") for q in asked]
        for system in systems:
            shown = [answers[q.id].get(system.id) for q in asked]
            if all(answer is None for answer in shown):
                continue
            line[keys[system.id]] = [_scored_answer(answer, scores) for answer in shown]
        line.update(evaluation=document.evaluation or "human", input=document.text, source=document.source)
        lines.append(line)
    return lines


SCORE_MARKER = SCORE_SEPARATOR.strip()


def _scored_answer(answer: Answer | None, scores: dict[int, int]) -> str:
    if answer is None:
        return ""
    if answer.id in scores:
        return f"{answer.text}{SCORE_SEPARATOR}{scores[answer.id]}"
    if SCORE_MARKER in answer.text:
        # An unscored answer quoting the separator would read back as scored: close it with an empty
        # score, as L-Eval's form shows an answer not scored yet.
        return f"{answer.text}{SCORE_SEPARATOR}"
    return answer.text


def split_scored_answer(value: str) -> tuple[str, str | None]:
    """Split 'answer + separator + score' at the last separator into (answer, score text).

    The score is None when the answer is unscored: no separator, or nothing but spaces after it.
    """
    if SCORE_SEPARATOR in value:
        answer, _, score = value.rpartition(SCORE_SEPARATOR)
    elif SCORE_MARKER in value:
        # L-Eval's form drops carriage returns and browsers may trim; accept the separator without its newlines.
        answer, _, score = value.rpartition(SCORE_MARKER)
        answer = answer.rstrip("\n")
    else:
        return value, None
    return answer, score if score.strip() else None


def leval_left_out(study_id: int, annotator: str) -> dict[str, int]:
    """Count, per system, the scores of the annotator's latest round that the leval file cannot hold.

    Those are scores of answers the study no longer shows: a system that left the study, a question
    it dropped, or an older answer version (stale). The jsonl and csv exports hold them.
    """
    user_id = db.session.scalar(select(User.id).where(User.username == annotator))
    current = latest_round(study_id, user_id) if user_id is not None else None
    if current is None:
        return {}
    return dict(db.session.execute(
        select(System.name, func.count(Score.id)).join(Answer, Answer.id == Score.answer_id)
        .join(System, System.id == Answer.system_id)
        .where(Score.round_id == current.id, ~is_current_condition(study_id), COUNTED)
        .group_by(System.name).order_by(System.name)
    ).all())


def left_out_note(counts: dict[str, int]) -> str | None:
    """Say what a leval file leaves out, or None when it holds every score of the latest round."""
    if not counts:
        return None
    total = sum(counts.values())
    per_system = ", ".join(f"{name}: {count}" for name, count in counts.items())
    return (f"left out {total} score{'s' if total != 1 else ''} ({per_system}) given to answers the study no "
            "longer shows (a system or question that left it, or an older answer version); "
            "L-Eval's layout has no place for them, the jsonl and csv exports hold them")


def annotators_with_scores(study_id: int) -> list[str]:
    """Names of annotators with at least one score in the study, for the per-annotator downloads."""
    return list(db.session.scalars(
        select(User.username).join(Score, Score.annotator_id == User.id)
        .join(AnnotationRound, AnnotationRound.id == Score.round_id)
        .where(AnnotationRound.study_id == study_id, COUNTED)
        .group_by(User.username).having(func.count(Score.id) > 0).order_by(User.username)
    ))
