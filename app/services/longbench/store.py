"""Store LongBench's files: its questions (one per data row, keyed by question set, dataset and position; v2's by its
`_id`), their documents when LongBench's data files are imported, and each model's predictions, in the caller's
transaction.

A model's rows carry no question text: the k-th row answers the data file's k-th row. Whichever comes first, a
model's file or the data file, creates the question; a model's row whose answers differ from those stored for its
position is refused (pred.py with several GPUs interleaves its processes' rows). Questions created from a model's
file sit in one document per dataset without text until the data file is imported, which moves each onto the
document of its own context.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import delete, func, insert, select, update

from app.core.benchmarks.report import ModelCounts as BaseCounts
from app.core.metrics.files import FileFormatError
from app.core.metrics.longbench import E, V1, V2, VARIANT_LABELS
from app.core.metrics.longbench.files import DataRow, LongbenchFile, PredRow, V2Row
from app.core.text import sha256_text, word_count
from app.extensions import db
from app.models import Document, LongbenchAnswer, LongbenchItem, MetricResult, Prediction, PredictionFile, Question, System
from app.models.longbench import LONGBENCH
from app.services.input_rules import long_answer_flag, system_name_problem, text_problem

EVALUATION = "longbench"


@dataclass
class ModelCounts(BaseCounts):
    documents_new: int = 0
    questions_placed: int = 0  # questions first stored from a model's file, now on their data row's document


def task_of(variant: str, dataset: str) -> str:
    """The task a question set's dataset is stored under: `narrativeqa`, LongBench-E's `narrativeqa_e`, `v2`."""
    return {V1: dataset, E: f"{dataset}_e", V2: "v2"}[variant]


def question_key(variant: str, dataset: str, position: int = 0, item_id: str = "") -> str:
    parts = ("longbench", V2, item_id) if variant == V2 else ("longbench", variant, dataset, str(position))
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def row_key(file: LongbenchFile, row) -> str:
    return question_key(file.variant, file.dataset, getattr(row, "position", 0), getattr(row, "item_id", ""))


def _json(value) -> str | None:
    return None if value is None else json.dumps(list(value) if isinstance(value, tuple) else value,
                                                 ensure_ascii=False)


def _answers_of(row) -> str:
    return _json(row.answer) if isinstance(row, V2Row) else _json(row.answers)


@dataclass(frozen=True)
class Stored:
    question_id: int
    document_id: int
    placeholder: bool
    answers: str
    all_classes: str | None
    length: float | None
    difficulty: str
    length_class: str


def stored_items(keys: Iterable[str]) -> dict[str, Stored]:
    """The stored LongBench questions of these keys."""
    keys = list(set(keys))
    found: dict[str, Stored] = {}
    for start in range(0, len(keys), 500):
        stmt = (select(Question.match_key, Question.id, Question.document_id, Document.text, LongbenchItem.answers,
                       LongbenchItem.all_classes, LongbenchItem.length, LongbenchItem.difficulty,
                       LongbenchItem.length_class)
                .join(Document, Document.id == Question.document_id)
                .join(LongbenchItem, LongbenchItem.question_id == Question.id)
                .where(Document.collection == LONGBENCH, Question.match_key.in_(keys[start:start + 500])))
        for key, qid, doc_id, text, answers, classes, length, difficulty, length_class in db.session.execute(stmt):
            found[key] = Stored(qid, doc_id, text == "", answers, classes, length, difficulty, length_class)
    return found


# --- what the database would refuse or contradict (read-only: the preview and the import) ----------------------


def row_errors(file: LongbenchFile) -> list[FileFormatError]:
    """Text the database cannot store, and rows that contradict the question stored for their key."""
    errors = []
    for row in file.rows:
        for field_name, value in _texts(row):
            if isinstance(value, str) and (problem := text_problem(value)):
                errors.append(FileFormatError(file.name, problem, line=row.line, field=field_name))
    stored = stored_items(row_key(file, row) for row in file.rows)
    for row in file.rows:
        known = stored.get(row_key(file, row))
        if known is not None and (clash := _clash(file, row, known)):
            errors.append(FileFormatError(file.name, clash[1], line=row.line, field=clash[0]))
    return errors


def _texts(row) -> list[tuple[str, str | None]]:
    if isinstance(row, PredRow):
        return [("pred", row.pred), *((f"answers", a) for a in row.answers)]
    if isinstance(row, DataRow):
        return [("input", row.input), ("context", row.context), *(("answers", a) for a in row.answers)]
    return [("response", row.response), ("question", row.question), ("context", row.context),
            *(("choice_" + "ABCD"[i], c) for i, c in enumerate(row.choices)), ("_id", row.item_id)]


def _clash(file: LongbenchFile, row, known: Stored) -> tuple[str, str] | None:
    where = (f"the question stored for {row.item_id!r}" if file.variant == V2 else
             f"row {row.position} of {task_of(file.variant, file.dataset)} as stored (from LongBench's data file or "
             "another model's file)")
    why = "" if file.variant == V2 or isinstance(row, DataRow) else (
        ": a model's rows answer the data file's rows in order, so this file's rows are out of that order "
        "(pred.py with several GPUs writes its processes' rows interleaved)")
    if _answers_of(row) != known.answers:
        return ("answer" if file.variant == V2 else "answers"), f"differs from {where}{why}"
    if isinstance(row, V2Row):
        if (row.difficulty, row.length) != (known.difficulty, known.length_class):
            return "difficulty", f"difficulty or length differs from {where}"
        return None
    if _json(row.all_classes) != known.all_classes and row.all_classes is not None and known.all_classes is not None:
        return "all_classes", f"differs from {where}{why}"
    if row.length is not None and known.length is not None and float(row.length) != known.length:
        return "length", f"differs from {where}{why}"
    return None


# --- documents and questions ------------------------------------------------------------------------------


def _placeholder(variant: str, dataset: str, *, demo: bool) -> Document:
    """The document without text that holds a dataset's questions until LongBench's data file is imported."""
    task = task_of(variant, dataset)
    key = sha256_text(f"placeholder\x1f{task}")
    document = db.session.scalars(select(Document).where(
        Document.collection == LONGBENCH, Document.task == task, Document.sha256 == key)).first()
    if document is None:
        title = f"{VARIANT_LABELS[variant]}" + (f" {dataset}" if variant != V2 else "") + " (no context imported)"
        document = Document(collection=LONGBENCH, task=task, source=dataset, title=title, text="", sha256=key,
                            word_count=0, char_count=0, evaluation=EVALUATION,
                            source_file=f"{dataset}.jsonl" if variant != V2 else "", line_no=0, is_demo=demo)
        db.session.add(document)
        db.session.flush()
    return document


def _next_position(document_id: int) -> int:
    last = db.session.scalar(select(func.max(Question.position)).where(Question.document_id == document_id))
    return 0 if last is None else last + 1


def _instruction(row) -> str:
    if isinstance(row, V2Row):
        choices = "\n".join(f"({letter}) {text}" for letter, text in zip("ABCD", row.choices))
        return f"{row.question}\n\n{choices}"
    return row.input if isinstance(row, DataRow) else ""


def _reference(row) -> str:
    if isinstance(row, V2Row):
        return row.answer
    return row.answers[0] if row.answers else ""


def _item(file: LongbenchFile, row, question_id: int) -> dict:
    v2 = isinstance(row, V2Row)
    return {"question_id": question_id, "variant": file.variant, "dataset": V2 if v2 else file.dataset,
            "position": 0 if v2 else row.position, "item_id": getattr(row, "item_id", ""),
            "answers": _answers_of(row), "all_classes": None if v2 else _json(row.all_classes),
            "length": None if v2 or row.length is None else float(row.length),
            "difficulty": row.difficulty if v2 else "", "length_class": row.length if v2 else "",
            "domain": row.domain[:80] if v2 else ""}


def _add_questions(document: Document, file: LongbenchFile, rows: list, keys: list[str]) -> dict[str, int]:
    """Insert the rows' questions on `document` (in row order) with their items: {key: question id}."""
    start = _next_position(document.id)
    db.session.execute(insert(Question.__table__), [
        {"document_id": document.id, "position": start + i, "instruction": _instruction(row),
         "reference": _reference(row), "evaluation": EVALUATION, "match_key": key}
        for i, (row, key) in enumerate(zip(rows, keys))])
    ids = dict(db.session.execute(select(Question.match_key, Question.id).where(
        Question.document_id == document.id, Question.match_key.in_(keys))).all())
    db.session.execute(insert(LongbenchItem.__table__), [_item(file, row, ids[key]) for row, key in zip(rows, keys)])
    return ids


def store_data(file: LongbenchFile, counts: ModelCounts, *, demo: bool = False) -> None:
    """LongBench's data rows: a document per context, a question per row (text-less questions move onto theirs)."""
    task = task_of(file.variant, file.dataset)
    keys = [row_key(file, row) for row in file.rows]
    stored = stored_items(keys)
    documents: dict[str, Document] = {}
    for row, key in zip(file.rows, keys):
        digest = sha256_text(row.context)
        document = documents.get(digest) or db.session.scalars(select(Document).where(
            Document.collection == LONGBENCH, Document.task == task, Document.sha256 == digest)).first()
        if document is None:
            document = Document(collection=LONGBENCH, task=task, source=file.dataset, title=(
                f"{VARIANT_LABELS[file.variant]} {file.dataset} #{row.position}"), text=row.context, sha256=digest,
                word_count=word_count(row.context), char_count=len(row.context), evaluation=EVALUATION,
                source_file=file.name[-500:], line_no=row.line, is_demo=demo)
            db.session.add(document)
            db.session.flush()
            counts.documents_new += 1
        documents[digest] = document
        known = stored.get(key)
        if known is None:
            _add_questions(document, file, [row], [key])
            counts.questions_new += 1
        elif known.placeholder:
            db.session.execute(update(Question).where(Question.id == known.question_id).values(
                document_id=document.id, position=_next_position(document.id), instruction=row.input))
            db.session.execute(update(LongbenchItem).where(LongbenchItem.question_id == known.question_id).values(
                item_id=row.item_id, **({"length": float(row.length)} if known.length is None and row.length
                                        is not None else {})))
            counts.questions_placed += 1
        else:
            counts.unchanged += 1
    # A dataset's document without text goes once its last question found its own.
    empty = select(Question.id).where(Question.document_id == Document.id).exists()
    db.session.execute(delete(Document).where(Document.collection == LONGBENCH, Document.task == task,
                                              Document.text == "", ~empty))


def _system(name: str, uploaded_by_id: int | None, *, demo: bool) -> System:
    system = db.session.scalars(select(System).where(System.name == name)).first()
    if system is None:
        if problem := system_name_problem(name):
            raise FileFormatError(f"{name[:120]}/", problem)
        system = System(name=name, pred_key="pred", uploaded_by_id=uploaded_by_id, is_demo=demo)
        db.session.add(system)
        db.session.flush()
    return system


def store_predictions(system_name: str, files: list[LongbenchFile], *, sha256s: dict[str, str],
                      stored_paths: dict[str, str], uploaded_by_id: int | None = None, replace: bool = False,
                      demo: bool = False) -> ModelCounts:
    """Write one model's prediction files (v1, LongBench-E, v2) in the current transaction."""
    counts = ModelCounts(system=system_name, files=len(files))
    system = _system(system_name, uploaded_by_id, demo=demo)
    for file in files:
        counts.rows += len(file.rows)
        keys = [row_key(file, row) for row in file.rows]
        known = {key: item.question_id for key, item in stored_items(keys).items()}
        fresh = [(row, key) for row, key in zip(file.rows, keys) if key not in known]
        fresh = list({key: (row, key) for row, key in fresh}.values())
        if fresh:
            document = _placeholder(file.variant, file.dataset, demo=demo)
            known.update(_add_questions(document, file, [r for r, _ in fresh], [k for _, k in fresh]))
            counts.questions_new += len(fresh)
        pred_file = _prediction_file(system, file, sha256s[file.name], stored_paths.get(file.name, ""),
                                     uploaded_by_id)
        _store_rows(system, file, [known[key] for key in keys], pred_file, counts, replace)
    db.session.flush()
    return counts


def _prediction_file(system: System, file: LongbenchFile, sha256: str, stored_path: str,
                     uploaded_by_id: int | None) -> PredictionFile:
    pred_file = db.session.scalars(select(PredictionFile).where(
        PredictionFile.system_id == system.id, PredictionFile.sha256 == sha256)).first()
    if pred_file is None:
        pred_file = PredictionFile(system=system, filename=file.name[-500:], stored_path=stored_path, sha256=sha256,
                                   task=task_of(file.variant, file.dataset), pred_key="pred", rows=len(file.rows),
                                   matched=len(file.rows), unmatched=0, uploaded_by_id=uploaded_by_id)
        db.session.add(pred_file)
        db.session.flush()
    return pred_file


def answer_text(row) -> str:
    """What a prediction's text is: v1's and LongBench-E's `pred`; v2's `response` (the letter is kept apart)."""
    return row.response if isinstance(row, V2Row) else row.pred


def _store_rows(system: System, file: LongbenchFile, question_ids: list[int], pred_file: PredictionFile,
                counts: ModelCounts, replace: bool) -> None:
    existing = {qid: (pid, text) for pid, qid, text in db.session.execute(
        select(Prediction.id, Prediction.question_id, Prediction.text)
        .where(Prediction.system_id == system.id, Prediction.question_id.in_(question_ids)))} if question_ids else {}
    new_rows, replaced, answers = [], [], {}
    for row, question_id in zip(file.rows, question_ids):
        text = answer_text(row)
        current = existing.get(question_id)
        if current is None:
            new_rows.append({"system_id": system.id, "question_id": question_id, "file_id": pred_file.id,
                             "line_no": row.line, "text": text, "text_sha256": sha256_text(text), "prompt": None,
                             "evaluation": EVALUATION, "word_count": word_count(text),
                             "long_answer": long_answer_flag(text)})
            answers[question_id] = row
        elif current[1] == text:
            counts.unchanged += 1
            if replace:
                db.session.execute(update(Prediction).where(Prediction.id == current[0]).values(
                    line_no=row.line, file_id=pred_file.id))
                answers[question_id] = row
        elif replace:
            # Answer versions a study pinned keep the old text; the old text's scores go with it.
            db.session.execute(update(Prediction).where(Prediction.id == current[0]).values(
                text=text, text_sha256=sha256_text(text), line_no=row.line, file_id=pred_file.id,
                word_count=word_count(text), long_answer=long_answer_flag(text)))
            replaced.append(current[0])
            answers[question_id] = row
            counts.replaced += 1
        else:
            counts.conflicts += 1  # keep what is stored: swapping an answer silently would orphan its scores
    if replaced:
        db.session.execute(delete(MetricResult).where(MetricResult.prediction_id.in_(replaced)))
    if new_rows:
        db.session.execute(insert(Prediction.__table__), new_rows)
        counts.created += len(new_rows)
    if file.variant == V2 and answers:
        _store_choices(system, answers)


def _store_choices(system: System, rows: dict[int, V2Row]) -> None:
    """v2: the letter pred.py extracted and its judge, beside the prediction."""
    ids = dict(db.session.execute(select(Prediction.question_id, Prediction.id).where(
        Prediction.system_id == system.id, Prediction.question_id.in_(list(rows)))).all())
    db.session.execute(delete(LongbenchAnswer).where(LongbenchAnswer.prediction_id.in_(list(ids.values()))))
    db.session.execute(insert(LongbenchAnswer.__table__), [
        {"prediction_id": ids[qid], "choice": row.pred, "judge": row.judge} for qid, row in rows.items()])


def preview_counts(system_name: str, file: LongbenchFile) -> ModelCounts:
    """What storing a file would do (new questions; new, unchanged and conflicting predictions); no writes."""
    counts = ModelCounts(system=system_name, files=1, rows=len(file.rows))
    keys = [row_key(file, row) for row in file.rows]
    known = stored_items(keys)
    if file.data:
        counts.questions_new = sum(1 for key in set(keys) if key not in known)
        counts.questions_placed = sum(1 for key in set(keys) if key in known and known[key].placeholder)
        counts.unchanged = len(set(keys)) - counts.questions_new - counts.questions_placed
        return counts
    counts.questions_new = sum(1 for key in set(keys) if key not in known)
    system = db.session.scalars(select(System).where(System.name == system_name)).first()
    stored: dict[int, str] = {}
    ids = [item.question_id for item in known.values()]
    if system is not None and ids:
        stored = dict(db.session.execute(select(Prediction.question_id, Prediction.text).where(
            Prediction.system_id == system.id, Prediction.question_id.in_(ids))).all())
    for key, row in zip(keys, file.rows):
        text = stored.get(known[key].question_id) if key in known else None
        if text is None:
            counts.created += 1
        elif text == answer_text(row):
            counts.unchanged += 1
        else:
            counts.conflicts += 1
    return counts
