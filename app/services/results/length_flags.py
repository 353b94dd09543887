"""L-Eval's length instruction ("LIE"): prompts with the target length, and flagging systems.

Researchers download the subset's questions with "We need a N-word answer."
appended (N = words in the human reference), generate answers with them, and
flag the resulting systems, so the results can put τ over plain systems next to
τ over length-instructed ones, as L-Eval's figure does.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import select

from app.core.stats.length_instruction import (
    LENGTH_INSTRUCTION_TEMPLATE,
    detected_word_target,
    reference_word_count,
    with_length_instruction,
)
from app.extensions import db
from app.models import (
    Document,
    Prediction,
    Question,
    StudyQuestion,
    StudySystem,
    System,
)


def prompt_rows(study_id: int) -> Iterator[dict]:
    """Yield one row per question of the study: the question, its length-instructed prompt and the document.

    `query` and `gt` are kept unchanged so that answers generated from these
    rows import back as an L-Eval prediction file and match their questions.
    """
    stmt = (
        select(Document, Question).join(Question, Question.document_id == Document.id)
        .join(StudyQuestion, StudyQuestion.question_id == Question.id)
        .where(StudyQuestion.study_id == study_id).order_by(StudyQuestion.position)
    )
    for document, question in db.session.execute(stmt):
        if not question.reference.strip():
            continue  # no reference, no length to instruct
        yield {
            "query": question.instruction,
            "gt": question.reference,
            "prompt": with_length_instruction(question.instruction, question.reference),
            "word_target": reference_word_count(question.reference),
            "instruction_template": LENGTH_INSTRUCTION_TEMPLATE,
            "evaluation": "human",
            "source": document.source,
            "document_sha256": document.sha256,
            "input": document.text,
        }


@dataclass(frozen=True)
class SystemFlag:
    """A system in the human evaluation, whether it is flagged, and what its prompts suggest."""

    id: int
    name: str
    length_instruction: bool
    answers: int
    prompts_with_instruction: int


def _study_systems(study_id: int) -> list[System]:
    return list(db.session.scalars(select(System).join(StudySystem, StudySystem.system_id == System.id)
                                   .where(StudySystem.study_id == study_id).order_by(System.name)))


def systems_with_flags(study_id: int) -> list[SystemFlag]:
    """List the study's systems with their flag and how many of their stored prompts carry a length instruction."""
    systems = _study_systems(study_id)
    stmt = (select(Prediction.system_id, Prediction.prompt)
            .join(StudyQuestion, StudyQuestion.question_id == Prediction.question_id)
            .where(StudyQuestion.study_id == study_id, Prediction.system_id.in_([s.id for s in systems])))
    answers: Counter[int] = Counter()
    detected: Counter[int] = Counter()
    for system_id, prompt in db.session.execute(stmt):
        answers[system_id] += 1
        if prompt and detected_word_target(prompt) is not None:
            detected[system_id] += 1
    return [SystemFlag(s.id, s.name, bool(s.length_instruction), answers[s.id], detected[s.id]) for s in systems]


def set_length_instruction_flags(study_id: int, flagged_ids: set[int]) -> list[str]:
    """Flag exactly the given systems among the study's; return the names whose flag changed."""
    changed = []
    for system in _study_systems(study_id):
        wanted = system.id in flagged_ids
        if bool(system.length_instruction) != wanted:
            system.length_instruction = wanted
            changed.append(system.name)
    db.session.commit()
    return sorted(changed)
