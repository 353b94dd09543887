"""Import `<model>.pred.jsonl` files and match each row to its question by (query, gt)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import delete, select

from app.core.metrics.files import FileFormatError, Row, prediction_key
from app.core.text import match_key, normalize_ws, sha256_text, word_count
from app.extensions import db
from app.models import (
    Document,
    MetricResult,
    Prediction,
    PredictionFile,
    Question,
    System,
)
from app.models.corpus import HUMAN_EVAL, TASKS
from app.services.demo_scope import question_demo_marks
from app.services.importers.fields import optional_str, require_str, storable
from app.services.input_rules import long_answer_flag, system_name_problem

UNMATCHED_EXAMPLES = 3
UNMATCHED_LINES = 20
# Rows parsed, matched and written at a time by a streamed import (runner.import_prediction_file): its memory
# holds one chunk and its ORM objects, not the file; the file is still one transaction, all or nothing.
STAGE_ROWS = 500


@dataclass
class ParsedPrediction:
    line: int
    query: str
    gt: str
    text: str
    evaluation: str
    prompt: str | None
    key: str


@dataclass
class ParsedPredictionFile:
    system: str
    task: str
    pred_key: str
    rows: list[ParsedPrediction]


def parse_prediction_rows(rows: list[Row], name: str, system: str, task: str,
                          pred_key: str | None = None) -> ParsedPredictionFile:
    """Validate rows `{query, gt, <key>_pred, evaluation, prompt?}`; `pred_key` is the key earlier chunks of the
    same file used (else the first row's)."""
    pred_key = pred_key or _pred_key(rows[0], name)
    parsed = []
    for row in rows:
        if pred_key not in row.data:
            other = prediction_key(row.data)
            hint = f" (found {other!r})" if other else ""
            raise FileFormatError(name, f"missing{hint}; every row must use the same prediction key", line=row.line, field=pred_key)
        query = require_str(row, "query", name)
        gt = require_str(row, "gt", name, allow_empty=True)
        parsed.append(ParsedPrediction(
            line=row.line, query=query, gt=gt, text=require_str(row, pred_key, name, allow_empty=True),
            evaluation=optional_str(row, "evaluation", name, column=Prediction.evaluation) or "",
            prompt=optional_str(row, "prompt", name), key=match_key(query, gt),
        ))
    return ParsedPredictionFile(system=system, task=task, pred_key=pred_key, rows=parsed)


def _pred_key(row: Row, name: str) -> str:
    key = prediction_key(row.data)
    if key is None:
        raise FileFormatError(name, "no '<model>_pred' key in the row", line=row.line, field="<model>_pred")
    shown = key.replace("\x00", "\\u0000")
    return storable(row, shown[:80] + ("…" if len(shown) > 80 else ""), name, key, System.pred_key)


@dataclass
class PredictionCounts:
    system: str = ""
    rows: int = 0
    matched: int = 0
    created: int = 0
    unchanged: int = 0
    replaced: int = 0
    conflicts: int = 0
    unmatched: int = 0
    unmatched_human: int = 0
    # Non-human rows left unmatched although a human-evaluation question has their (query, gt).
    unmatched_in_subset: int = 0
    unmatched_examples: list[str] = field(default_factory=list)
    unmatched_lines: list[int] = field(default_factory=list)  # the first UNMATCHED_LINES of them


def _question_index(collection: str, task: str) -> dict[str, list[int]]:
    stmt = select(Question.match_key, Question.id).join(Document).where(Document.collection == collection)
    if task:
        stmt = stmt.where(Document.task == task)
    index: dict[str, list[int]] = defaultdict(list)
    for key, qid in db.session.execute(stmt.order_by(Document.id, Question.position)):
        index[key].append(qid)
    return index


def store_predictions(
    parsed: ParsedPredictionFile, *, name: str, sha256: str, stored_path: str = "",
    uploaded_by_id: int | None = None, replace: bool = False, demo: bool = False,
    assignments: list[tuple[ParsedPrediction, int]] | None = None,
) -> PredictionCounts:
    """Match and upsert predictions in the current transaction (a PredictionStager given the whole file at once).

    `assignments` pairs rows with question ids matched elsewhere (OpenCompass rows, matched on their prompt).
    """
    stager = PredictionStager(parsed.system, parsed.task, parsed.pred_key, name=name, sha256=sha256,
                              stored_path=stored_path, uploaded_by_id=uploaded_by_id, replace=replace, demo=demo)
    stager.add(parsed.rows, assignments)
    return stager.finish()


class PredictionStager:
    """Match and upsert one prediction file's rows, chunk by chunk, in the caller's transaction (the caller
    commits once, after the last chunk, or rolls the whole file back). Each chunk's objects leave the session
    once written, so memory holds one chunk whatever the file's length."""

    def __init__(self, system: str, task: str, pred_key: str, *, name: str, sha256: str, stored_path: str = "",
                 uploaded_by_id: int | None = None, replace: bool = False, demo: bool = False) -> None:
        self.system_name, self.task, self.pred_key, self.name = system, task, pred_key, name
        self.sha256, self.stored_path, self.uploaded_by_id = sha256, stored_path, uploaded_by_id
        self.replace, self.demo = replace, demo
        self.counts = PredictionCounts(system=system)
        self.matcher: QuestionMatcher | None = None
        self.system_id: int | None = None
        self.file_id: int | None = None
        self.created_system = self.created_file = False
        self.demo_marks: set[bool] = set()  # of every matched question's document: a new system is demo if all are

    def add(self, rows: list[ParsedPrediction], assignments: list[tuple[ParsedPrediction, int]] | None = None) -> None:
        self.counts.rows += len(rows)
        if assignments is None:
            self.matcher = self.matcher or QuestionMatcher(self.task)
            assignments = self.matcher.assign(rows, self.name, self.counts)
        else:
            self.counts.matched += len(assignments)
        self.demo_marks |= question_demo_marks(question_id for _, question_id in assignments)
        if self.system_id is None:
            self._open()
        existing = {p.question_id: p for p in db.session.scalars(select(Prediction).where(
            Prediction.system_id == self.system_id,
            Prediction.question_id.in_({question_id for _, question_id in assignments})))}
        touched: list[Prediction] = list(existing.values())
        replaced_ids: list[int] = []
        for row, question_id in assignments:
            current = existing.get(question_id)
            if current is None:
                added = Prediction(
                    system_id=self.system_id, question_id=question_id, file_id=self.file_id, line_no=row.line,
                    text=row.text, text_sha256=sha256_text(row.text), prompt=row.prompt, evaluation=row.evaluation,
                    word_count=word_count(row.text), long_answer=long_answer_flag(row.text),
                )
                db.session.add(added)
                touched.append(added)
                self.counts.created += 1
            elif current.text == row.text:
                self.counts.unchanged += 1
            elif self.replace:
                # The prediction takes the new text; answer versions that studies pinned keep the old one,
                # and metric values of the old text go (they would stand beside text they were not computed for).
                current.text, current.prompt, current.word_count = row.text, row.prompt, word_count(row.text)
                current.text_sha256, current.long_answer = sha256_text(row.text), long_answer_flag(row.text)
                current.file_id, current.line_no, current.evaluation = self.file_id, row.line, row.evaluation
                replaced_ids.append(current.id)
                self.counts.replaced += 1
            else:
                # Keep what is stored unless asked: the report says what differs.
                self.counts.conflicts += 1
        if replaced_ids:
            db.session.execute(delete(MetricResult).where(MetricResult.prediction_id.in_(replaced_ids)))
        db.session.flush()
        for prediction in touched:  # written to the transaction: the session need not keep them
            db.session.expunge(prediction)

    def _open(self) -> None:
        """The system (created if new) and the file's record, before the first chunk's predictions."""
        system = db.session.scalars(select(System).where(System.name == self.system_name)).first()
        if system is None:
            if problem := system_name_problem(self.system_name):
                raise FileFormatError(self.name, problem)
            system = System(name=self.system_name, pred_key=self.pred_key, uploaded_by_id=self.uploaded_by_id,
                            is_demo=self.demo or self.demo_marks == {True})
            db.session.add(system)
            db.session.flush()
            self.created_system = True
        pred_file = db.session.scalars(
            select(PredictionFile).where(PredictionFile.system_id == system.id, PredictionFile.sha256 == self.sha256)
        ).first()
        if pred_file is None:
            pred_file = PredictionFile(
                system=system, filename=self.name, stored_path=self.stored_path, sha256=self.sha256, task=self.task,
                pred_key=self.pred_key, rows=0, uploaded_by_id=self.uploaded_by_id,
            )
            db.session.add(pred_file)
            db.session.flush()
            self.created_file = True
        self.system_id, self.file_id = system.id, pred_file.id

    def finish(self) -> PredictionCounts:
        """Record the file's counts (and a new system's demo mark, from every chunk's questions)."""
        pred_file = db.session.get(PredictionFile, self.file_id)
        if self.created_file:
            pred_file.rows = self.counts.rows
        pred_file.matched, pred_file.unmatched = self.counts.matched, self.counts.unmatched
        if self.created_system:
            db.session.get(System, self.system_id).is_demo = self.demo or self.demo_marks == {True}
        db.session.flush()
        return self.counts


def preview_predictions(parsed: ParsedPredictionFile, *, name: str,
                        assignments: list[tuple[ParsedPrediction, int]] | None = None) -> PredictionCounts:
    """Count what store_predictions would do (matched, new, unchanged, conflicts) without writing anything."""
    counts = PredictionCounts(system=parsed.system, rows=len(parsed.rows))
    assignments = _assigned(parsed, name, counts, assignments)
    system_id = db.session.scalar(select(System.id).where(System.name == parsed.system))
    stored: dict[int, str] = {}
    if system_id is not None:
        stored = dict(db.session.execute(
            select(Prediction.question_id, Prediction.text).where(Prediction.system_id == system_id)
        ).all())
    for row, question_id in assignments:
        text = stored.get(question_id)
        if text is None:
            counts.created += 1
        elif text == row.text:
            counts.unchanged += 1
        else:
            counts.conflicts += 1
    return counts


def _assigned(parsed: ParsedPredictionFile, name: str, counts: PredictionCounts,
              assignments: list[tuple[ParsedPrediction, int]] | None) -> list[tuple[ParsedPrediction, int]]:
    if assignments is None:
        return QuestionMatcher(parsed.task).assign(parsed.rows, name, counts)
    counts.matched = len(assignments)
    return assignments


class QuestionMatcher:
    """Pairs a file's rows with questions, chunk after chunk; the k-th repeat of a key takes the k-th question with
    that key, and a key repeated more often than it has questions is a duplicate (whichever chunk it is in)."""

    def __init__(self, task: str) -> None:
        self.indexes = {HUMAN_EVAL: _question_index(HUMAN_EVAL, ""), TASKS: _question_index(TASKS, task)}
        self.used: dict[tuple[str, str], int] = defaultdict(int)
        self.first_line: dict[tuple[str, str], int] = {}

    def assign(self, rows: list[ParsedPrediction], name: str,
               counts: PredictionCounts) -> list[tuple[ParsedPrediction, int]]:
        indexes, assignments = self.indexes, []
        for row in rows:
            # Human-eval rows look in the human-eval subset first, then in the task files; other rows only in
            # the task files: an f1/rouge/exam/LLM answer must never stand in for a human-evaluation answer.
            scopes = (HUMAN_EVAL, TASKS) if row.evaluation == "human" else (TASKS,)
            scope = next((s for s in scopes if indexes[s].get(row.key)), scopes[0])
            candidates = indexes[scope].get(row.key, [])
            slot = (scope, row.key)
            seen = self.used[slot]
            self.used[slot] += 1
            if candidates and seen >= len(candidates):
                raise FileFormatError(
                    name, f"duplicate (query, gt): already on line {self.first_line[slot]}", line=row.line,
                    field="query")
            self.first_line.setdefault(slot, row.line)
            if not candidates:
                counts.unmatched += 1
                if row.evaluation == "human":
                    counts.unmatched_human += 1
                elif indexes[HUMAN_EVAL].get(row.key):
                    counts.unmatched_in_subset += 1
                if len(counts.unmatched_lines) < UNMATCHED_LINES:
                    counts.unmatched_lines.append(row.line)
                if len(counts.unmatched_examples) < UNMATCHED_EXAMPLES:
                    counts.unmatched_examples.append(f"line {row.line}: {normalize_ws(row.query)[:80]}")
                continue
            counts.matched += 1
            assignments.append((row, candidates[seen]))
        return assignments
