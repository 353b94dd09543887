"""The judge command's inputs: prediction files or systems in the database, paired by (query, gt).

A file whose rows all match questions in the database is imported with the ordinary importer,
so its judgments count for that system; any other file is only read. Either way the file's
own answers are what gets judged.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select

from app.core.judge import PairItem
from app.core.metrics.files import FileFormatError, describe_file, parse_jsonl
from app.extensions import db
from app.models import Document, Prediction, Question, System
from app.models.corpus import HUMAN_EVAL
from app.services.importers.predictions import parse_prediction_rows
from app.services.importers.runner import import_rows
from app.services.judge.pairs import (
    DEFAULT_SCOPE,
    SCOPES,
    JudgePair,
    PairError,
    system_named,
)


@dataclass(frozen=True)
class Answer:
    query: str
    gt: str
    text: str
    line: int = 0
    question_id: int | None = None


@dataclass
class Side:
    """One side of the battle: its answers by match key and, if known, its system."""

    label: str
    answers: dict[str, Answer]
    system: System | None = None
    notes: list[str] = field(default_factory=list)


def resolve_side(argument: str, *, scope: str = DEFAULT_SCOPE) -> Side:
    """Read a prediction file, or load a system's predictions in `scope`."""
    path = Path(argument)
    if path.is_file():
        return side_from_file(path)
    if db.session.scalar(select(System.id).where(System.name == argument)) is not None:
        return side_from_system(system_named(argument), scope)
    raise PairError(f"{argument!r} is neither a prediction file nor a system in the database")


def side_from_file(path: Path) -> Side:
    """Read a `.pred.jsonl`; a repeated (query, gt) is an error. Import it when every row has a question."""
    raw = path.read_bytes()
    name = path.name
    try:
        rows = parse_jsonl(raw, name)
        task, system_name = describe_file(path, fallback=False)
        parsed = parse_prediction_rows(rows, name, system_name, task)
    except FileFormatError as exc:
        raise PairError(str(exc)) from None
    answers: dict[str, Answer] = {}
    for row in parsed.rows:
        if row.key in answers:
            raise PairError(f"{name}, line {row.line}: duplicate (query, gt), first on line {answers[row.key].line}")
        answers[row.key] = Answer(row.query, row.gt, row.text, row.line)
    side = Side(label=system_name, answers=answers)
    known = set(db.session.scalars(select(Question.match_key).where(Question.match_key.in_(list(answers)))))
    if known != set(answers):
        side.notes.append(f"{name}: read only ({len(answers) - len(known)} rows match no question in the database)")
        return side
    report = import_rows(path, name, "predictions", rows, raw)
    counts = report.counts
    if report.error or counts.get("conflicts") or counts.get("unmatched"):
        why = (report.error["message"] if report.error
               else f"{counts.get('conflicts', 0)} rows differ from stored predictions")
        side.notes.append(f"{name}: read only, not linked to system {system_name!r} ({why})")
        return side
    system = system_named(system_name)
    stored = _predictions_by_key(system, set(answers))
    linked = {}
    for key, answer in answers.items():
        question_id = stored.get((key, answer.text))
        linked[key] = Answer(answer.query, answer.gt, answer.text, answer.line, question_id)
    side.answers, side.system = linked, system
    return side


def _predictions_by_key(system: System, keys: set[str]) -> dict[tuple[str, str], int]:
    """Map (match key, answer text) to the question the system's stored prediction answers."""
    stmt = (
        select(Question.match_key, Prediction.text, Question.id, Document.collection)
        .join(Prediction, Prediction.question_id == Question.id)
        .join(Document, Question.document_id == Document.id)
        .where(Prediction.system_id == system.id, Question.match_key.in_(list(keys)))
        # Human-eval questions first: the importer looks there first for human-eval rows.
        .order_by((Document.collection != HUMAN_EVAL), Question.id)
    )
    found: dict[tuple[str, str], int] = {}
    for key, text, question_id, _collection in db.session.execute(stmt):
        found.setdefault((key, text), question_id)
    return found


def side_from_system(system: System, scope: str) -> Side:
    """Load a system's predictions on the questions in `scope`."""
    if scope not in SCOPES:
        raise PairError(f"unknown scope {scope!r}; choose one of {', '.join(SCOPES)}")
    stmt = (
        select(Question, Prediction.text, Prediction.line_no)
        .join(Prediction, Prediction.question_id == Question.id)
        .join(Document, Question.document_id == Document.id)
        .where(Prediction.system_id == system.id)
        .order_by(Document.id, Question.position)
    )
    if scope == "human_eval":
        stmt = stmt.where(Document.collection == HUMAN_EVAL)
    elif scope == "llm":
        stmt = stmt.where(Question.evaluation == "LLM")
    answers: dict[str, Answer] = {}
    for question, text, line in db.session.execute(stmt):
        # The same (query, gt) can be a question in two collections; the first in scope order wins.
        answers.setdefault(question.match_key,
                           Answer(question.instruction, question.reference, text, line, question.id))
    return Side(label=system.name, answers=answers, system=system)


def match_sides(system: Side, baseline: Side) -> tuple[list[JudgePair], int, int]:
    """Pair answers with the same (query, gt); return the pairs and how many rows of each side found none."""
    pairs = []
    questions = _questions({a.question_id for a in system.answers.values()} |
                           {a.question_id for a in baseline.answers.values()})
    for number, (key, mine) in enumerate(system.answers.items()):
        theirs = baseline.answers.get(key)
        if theirs is None:
            continue
        question_id = mine.question_id or theirs.question_id
        question = questions.get(question_id)
        # Texts from the database when the question is known, so cache keys match the web runs'.
        text, reference = (question.instruction, question.reference) if question else (mine.query, mine.gt)
        pair_id = question_id if question_id is not None else f"row{number}"
        pairs.append(JudgePair(PairItem(pair_id, text, reference, mine.text, theirs.text), question_id))
    unpaired_system = len(system.answers) - len(pairs)
    unpaired_baseline = len(baseline.answers) - len(pairs)
    return pairs, unpaired_system, unpaired_baseline


def _questions(ids: set[int | None]) -> dict[int, Question]:
    ids.discard(None)
    if not ids:
        return {}
    return {q.id: q for q in db.session.scalars(select(Question).where(Question.id.in_(list(ids))))}


__all__ = ["Answer", "Side", "match_sides", "resolve_side", "side_from_file", "side_from_system"]
