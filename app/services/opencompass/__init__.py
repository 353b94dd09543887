"""OpenCompass predictions: read its files and match each row to a stored question on content.

The layout and keys are OpenCompass's own (app/core/opencompass.py). A row of an L-Eval dataset is
matched by what it holds, never by its position alone: its `gold` must equal what OpenCompass's
loader makes of a stored question's reference (quality keeps only its option letter), and that question's text and its whole document must appear in its `origin_prompt`
(whitespace collapsed; many documents of a task open and end alike, so nothing less tells them apart). Stored questions that are copies of each other (L-Eval's task files
repeat a few documents under another `evaluation`, and some questions within a document) cannot be
told apart by content: the k-th such row takes the k-th copy, as `.pred.jsonl` uploads do. A row that
fits questions that do differ is refused as ambiguous.

The rows of another benchmark's datasets are its plugin's to match (app.core.benchmarks.spec.OpencompassReader):
LV-Eval's in app/services/lveval/opencompass.py, LongBench's in app/services/longbench/opencompass.py.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select

from app.core.input_files import NotARegularFile, read_regular_file
from app.core.json_input import JsonRefused, read_json
from app.core.opencompass import OcFile, OcProblem, OcRow, leval_gold, parse_rows
from app.core.text import normalize_ws
from app.extensions import db
from app.models import Document, Question
from app.models.corpus import TASKS
from app.services.importers.predictions import ParsedPrediction, ParsedPredictionFile
from app.services.input_rules import text_problem, unstorable_field


def read_file(path: Path, *, offset: int = 0) -> OcFile:
    """Parse one OpenCompass predictions file (`offset`: rows of the dataset's earlier parts)."""
    try:
        data = read_json(read_regular_file(path))
    except JsonRefused as exc:
        return OcFile(problems=[_refused(exc)])
    except NotARegularFile as exc:
        return OcFile(problems=[OcProblem(None, None, exc.why)])
    result = parse_rows(data, offset=offset)
    if isinstance(data, dict):
        for key, item in data.items():
            bad = unstorable_field(item) if isinstance(item, dict) else None
            if bad:
                result.problems.append(OcProblem(key, bad[0], bad[1]))
                result.rows = [row for row in result.rows if row.key != key]
    return result


def _refused(exc: JsonRefused) -> OcProblem:
    """The reader's refusal as a problem of the file: at its row's key and field when it is inside one."""
    where = f" (line {exc.line}, column {exc.column})" if exc.line is not None else ""
    key, field_ = (list(map(str, exc.path[:2])) + [None, None])[:2]
    return OcProblem(key, field_, f"{exc.reason}{where}")


@dataclass
class _Candidate:
    question_id: int
    evaluation: str
    instruction: str  # whitespace collapsed
    reference: str
    match_key: str
    document_id: int


@dataclass
class _Document:
    sha256: str
    text: str  # whitespace collapsed

    def in_prompt(self, prompt: str) -> bool:
        return self.text in prompt


@dataclass
class Matched:
    """Rows matched to questions (as `.pred.jsonl` rows with their question id) and the rows refused."""

    assignments: list[tuple[ParsedPrediction, int]] = field(default_factory=list)
    problems: list[tuple[OcRow, OcProblem]] = field(default_factory=list)
    stored_questions: int = 0


def match_leval(task: str, rows: list[OcRow]) -> Matched:
    """Match rows of one L-Eval dataset (all its parts, in dataset order) to the task's stored questions."""
    result = Matched()
    documents: dict[int, _Document] = {}
    for doc_id, sha256, text in db.session.execute(
        select(Document.id, Document.sha256, Document.text).where(Document.collection == TASKS, Document.task == task)
    ):
        documents[doc_id] = _Document(sha256, normalize_ws(text))
    by_reference: dict[str, list[_Candidate]] = defaultdict(list)
    for qid, evaluation, instruction, reference, key, doc_id in db.session.execute(
        select(Question.id, Question.evaluation, Question.instruction, Question.reference, Question.match_key,
               Question.document_id).join(Document)
        .where(Document.collection == TASKS, Document.task == task).order_by(Document.id, Question.position)
    ):
        result.stored_questions += 1
        by_reference[normalize_ws(leval_gold(task, reference))].append(
            _Candidate(qid, evaluation, normalize_ws(instruction), reference, key, doc_id))
    taken: dict[tuple[str, str], int] = defaultdict(int)
    for row in sorted(rows, key=lambda r: r.index):
        problem = _row_problem(row)
        if problem is None:
            problem = _match_row(task, row, by_reference, documents, taken, result)
        if problem is not None:
            result.problems.append((row, problem))
    return result


def _row_problem(row: OcRow) -> OcProblem | None:
    if isinstance(row.gold, (list, dict)):
        return OcProblem(row.key, "gold", f"an L-Eval answer is one string, not {'a list' if isinstance(row.gold, list) else 'an object'}")
    problem = text_problem(row.prediction)
    return OcProblem(row.key, "prediction", problem) if problem else None


def _match_row(task: str, row: OcRow, by_reference: dict[str, list[_Candidate]], documents: dict[int, _Document],
               taken: dict[tuple[str, str], int], result: Matched) -> OcProblem | None:
    prompt = normalize_ws(row.prompt)
    found = [c for c in by_reference.get(normalize_ws(row.gold or ""), [])
             if c.instruction in prompt and documents[c.document_id].in_prompt(prompt)]
    # Copies share their document's text and their (question, answer): nothing in a row can tell them apart.
    kinds = list(dict.fromkeys((documents[c.document_id].sha256, c.match_key) for c in found))
    if not found:
        if not result.stored_questions:
            # Said to the upload page and the command line alike: either can import the task file.
            return OcProblem(row.key, None, f"no question of L-Eval's {task} is stored: import its task file first "
                                            f"({task}.jsonl, on the upload page or with import-leval)")
        return OcProblem(row.key, None, f"matches no stored question of {task}: no question whose reference equals "
                                        "its gold has its text and its document in origin_prompt")
    if len(kinds) > 1:
        ids = ", ".join(f"#{c.question_id}" for c in found[:5])
        return OcProblem(row.key, None, f"matches {len(found)} different stored questions of {task} ({ids}): "
                                        "its gold, question and document fit each of them")
    copies = [c for c in found if (documents[c.document_id].sha256, c.match_key) == kinds[0]]
    nth = taken[kinds[0]]
    taken[kinds[0]] += 1
    if nth >= len(copies):
        return OcProblem(row.key, None, f"a repeat: {len(copies)} stored question(s) of {task} fit this row, "
                                        "and earlier rows took them")
    chosen = copies[nth]
    result.assignments.append((ParsedPrediction(
        line=row.index + 1, query=chosen.instruction, gt=chosen.reference, text=row.prediction,
        evaluation=chosen.evaluation, prompt=None, key=chosen.match_key,
    ), chosen.question_id))
    return None


def parsed_file(system: str, task: str, matched: Matched) -> ParsedPredictionFile:
    """The matched rows as the `.pred.jsonl` importer takes them (its store_predictions owns the upsert)."""
    return ParsedPredictionFile(system=system, task=task, pred_key=pred_key(system),
                                rows=[row for row, _ in matched.assignments])


def pred_key(system: str) -> str:
    return f"{system}_pred"
