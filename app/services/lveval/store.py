"""Store one model's LV-Eval files: questions of the LV-Eval benchmark (matched by dataset, level and question)
and the model's predictions, in the caller's transaction.

A question is keyed by its dataset, level, question text, answers and which occurrence of that pair it is in
the file: factrecall repeats one question 200 times per level, so the occurrence is what tells its rows apart.
"""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable

from sqlalchemy import delete, insert, select, update

from app.core.benchmarks.report import ModelCounts
from app.core.metrics.files import FileFormatError, LvevalRow
from app.core.metrics.lveval.evaluation import LvevalFile
from app.core.text import normalize_ws, sha256_text, word_count
from app.extensions import db
from app.models import (
    Document,
    LvevalItem,
    MetricResult,
    Prediction,
    PredictionFile,
    Question,
    System,
)
from app.models.corpus import LVEVAL
from app.services.demo_scope import ALL_DATA
from app.services.input_rules import long_answer_flag, system_name_problem

EVALUATION = "lveval"


def answers_json(answers: tuple[str, ...] | str) -> str:
    return json.dumps(answers if isinstance(answers, str) else list(answers), ensure_ascii=False)


def row_keys(dataset: str, level: str, rows: list[LvevalRow]) -> list[str]:
    """The question key of each row, in order."""
    keys = []
    for row, occurrence in zip(rows, _occurrences(rows)):
        joined = "\x1f".join((LVEVAL, dataset, level, normalize_ws(row.input), answers_json(row.answers),
                               str(occurrence)))
        keys.append(hashlib.sha256(joined.encode("utf-8")).hexdigest())
    return keys


def _reference(answers: tuple[str, ...] | str) -> str:
    return answers if isinstance(answers, str) else (answers[0] if answers else "")


def _document_key(task: str, demo: bool) -> str:
    """The sha256 an LV-Eval document is stored under: the demo's own, so a real model's document of the same
    dataset and level never collides with (or lands in) the demo's."""
    return sha256_text(f"demo\x1f{task}" if demo else task)


def _document(dataset: str, level: str, *, create: bool, demo: bool = False) -> Document | None:
    """The document of one dataset and level, the demo's or the real one (whatever a page's view shows)."""
    task = f"{dataset}_{level}"
    everywhere = {ALL_DATA: True}
    document = db.session.scalars(select(Document).where(
        Document.collection == LVEVAL, Document.task == task, Document.is_demo.is_(demo)
    ).execution_options(**everywhere)).first()
    if document is None and create:
        key = _document_key(task, demo)
        # A demo loaded before demo documents had a key of their own holds the real key: give it its own.
        holder = db.session.scalars(select(Document).where(
            Document.collection == LVEVAL, Document.task == task, Document.sha256 == key
        ).execution_options(**everywhere)).first()
        if holder is not None and holder.is_demo and not demo:
            holder.sha256 = _document_key(task, True)
            db.session.flush()
        document = Document(collection=LVEVAL, task=task, source=dataset, title=f"LV-Eval {dataset}, {level}",
                            text="", sha256=key, word_count=0, char_count=0, evaluation=EVALUATION,
                            source_file=f"{task}.jsonl", line_no=0, is_demo=demo)
        db.session.add(document)
        db.session.flush()
    return document


def _questions(document: Document | None) -> dict[str, int]:
    if document is None:
        return {}
    return dict(db.session.execute(
        select(Question.match_key, Question.id).where(Question.document_id == document.id)).all())


def _system(name: str, uploaded_by_id: int | None, *, create: bool, demo: bool = False) -> System | None:
    system = db.session.scalars(select(System).where(System.name == name)).first()
    if system is None and create:
        if problem := system_name_problem(name):
            raise FileFormatError(f"{name[:120]}/", problem)
        system = System(name=name, pred_key="pred", uploaded_by_id=uploaded_by_id, is_demo=demo)
        db.session.add(system)
        db.session.flush()
    return system


def _add_questions(document: Document, file: LvevalFile, keys: list[str], known: dict[str, int]) -> int:
    """Insert the file's new questions and their LV-Eval items; fill known items' missing length or depth."""
    fresh = {key: (row, occurrence) for key, row, occurrence in zip(keys, file.rows, _occurrences(file.rows))
             if key not in known}
    if fresh:
        start = len(known)
        db.session.execute(insert(Question.__table__), [
            {"document_id": document.id, "position": start + i, "instruction": row.input,
             "reference": _reference(row.answers), "evaluation": EVALUATION, "match_key": key}
            for i, (key, (row, _)) in enumerate(fresh.items())
        ])
        known.update(_questions(document))
        db.session.execute(insert(LvevalItem.__table__), [
            {"question_id": known[key], "dataset": file.dataset, "level": file.level, "occurrence": occurrence,
             "answers": answers_json(row.answers), "gold_ans": row.gold_ans, "length": row.length, "depth": row.depth}
            for key, (row, occurrence) in fresh.items()
        ])
    _fill_missing(file, keys, known, set(fresh))
    return len(fresh)


def _occurrences(rows: Iterable[LvevalRow]) -> list[int]:
    seen: dict[tuple[str, str], int] = defaultdict(int)
    result = []
    for row in rows:
        pair = (normalize_ws(row.input), answers_json(row.answers))
        result.append(seen[pair])
        seen[pair] += 1
    return result


def _fill_missing(file: LvevalFile, keys: list[str], known: dict[str, int], fresh: set[str]) -> None:
    """A later file may say what an earlier one did not (length, needle depth): keep the first value given."""
    wanted = {known[key]: row for key, row in zip(keys, file.rows)
              if key not in fresh and (row.length is not None or row.depth is not None)}
    if not wanted:
        return
    stmt = select(LvevalItem.question_id, LvevalItem.length, LvevalItem.depth).where(
        LvevalItem.question_id.in_(list(wanted)), (LvevalItem.length.is_(None)) | (LvevalItem.depth.is_(None)))
    for question_id, length, depth in db.session.execute(stmt).all():
        row = wanted[question_id]
        values = {}
        if length is None and row.length is not None:
            values["length"] = row.length
        if depth is None and row.depth is not None:
            values["depth"] = row.depth
        if values:
            db.session.execute(update(LvevalItem).where(LvevalItem.question_id == question_id).values(**values))


def store_model(system_name: str, files: list[LvevalFile], *, sha256s: dict[str, str], stored_paths: dict[str, str],
                uploaded_by_id: int | None = None, replace: bool = False, demo: bool = False) -> ModelCounts:
    """Write one model's files in the current transaction (the caller commits or rolls back)."""
    counts = ModelCounts(system=system_name, files=len(files))
    system = _system(system_name, uploaded_by_id, create=True, demo=demo)
    assert system is not None
    for file in files:
        counts.rows += len(file.rows)
        document = _document(file.dataset, file.level, create=True, demo=demo)
        assert document is not None
        keys = row_keys(file.dataset, file.level, file.rows)
        known = _questions(document)
        counts.questions_new += _add_questions(document, file, keys, known)
        pred_file = _prediction_file(system, file, sha256s[file.name], stored_paths.get(file.name, ""), uploaded_by_id)
        _store_predictions(system, document, file, [known[key] for key in keys], pred_file, counts, replace)
    db.session.flush()
    return counts


def _prediction_file(system: System, file: LvevalFile, sha256: str, stored_path: str,
                     uploaded_by_id: int | None) -> PredictionFile:
    pred_file = db.session.scalars(select(PredictionFile).where(
        PredictionFile.system_id == system.id, PredictionFile.sha256 == sha256)).first()
    if pred_file is None:
        pred_file = PredictionFile(system=system, filename=file.name, stored_path=stored_path, sha256=sha256,
                                   task=f"{file.dataset}_{file.level}", pred_key="pred", rows=len(file.rows),
                                   matched=len(file.rows), unmatched=0, uploaded_by_id=uploaded_by_id)
        db.session.add(pred_file)
        db.session.flush()
    return pred_file


def _store_predictions(system: System, document: Document, file: LvevalFile, question_ids: list[int],
                       pred_file: PredictionFile, counts: ModelCounts, replace: bool) -> None:
    existing = {qid: (pid, text) for pid, qid, text in db.session.execute(
        select(Prediction.id, Prediction.question_id, Prediction.text)
        .join(Question, Prediction.question_id == Question.id)
        .where(Prediction.system_id == system.id, Question.document_id == document.id))}
    new_rows, replaced = [], []
    for row, question_id in zip(file.rows, question_ids):
        current = existing.get(question_id)
        if current is None:
            new_rows.append({"system_id": system.id, "question_id": question_id, "file_id": pred_file.id,
                             "line_no": row.line, "text": row.pred, "text_sha256": sha256_text(row.pred),
                             "prompt": None, "evaluation": EVALUATION, "word_count": word_count(row.pred),
                             "long_answer": long_answer_flag(row.pred), "gold_ans": row.gold_ans})
        elif current[1] == row.pred:
            counts.unchanged += 1
            if replace:
                db.session.execute(update(Prediction).where(Prediction.id == current[0]).values(
                    line_no=row.line, file_id=pred_file.id, gold_ans=row.gold_ans))
        elif replace:
            # Answer versions a study pinned keep the old text; the old text's scores go with it.
            db.session.execute(update(Prediction).where(Prediction.id == current[0]).values(
                text=row.pred, text_sha256=sha256_text(row.pred), line_no=row.line, file_id=pred_file.id,
                word_count=word_count(row.pred), long_answer=long_answer_flag(row.pred), gold_ans=row.gold_ans))
            replaced.append(current[0])
            counts.replaced += 1
        else:
            counts.conflicts += 1  # keep what is stored: swapping an answer silently would orphan its scores
    if replaced:
        db.session.execute(delete(MetricResult).where(MetricResult.prediction_id.in_(replaced)))
    if new_rows:
        db.session.execute(insert(Prediction.__table__), new_rows)
        counts.created += len(new_rows)
    if replace:
        # The file is the model's whole answer for this dataset and level: rows it no longer has go.
        kept = set(question_ids)
        stale = [pid for qid, (pid, _) in existing.items() if qid not in kept]
        if stale:
            db.session.execute(delete(Prediction).where(Prediction.id.in_(stale)))
            counts.removed += len(stale)


def preview_model(system_name: str, files: list[LvevalFile]) -> dict[str, ModelCounts]:
    """Per file, what store_model would do (new questions, new / unchanged / conflicting predictions); no writes."""
    system = _system(system_name, None, create=False)
    result = {}
    for file in files:
        counts = ModelCounts(system=system_name, files=1, rows=len(file.rows))
        document = _document(file.dataset, file.level, create=False)
        keys = row_keys(file.dataset, file.level, file.rows)
        known = _questions(document)
        counts.questions_new = sum(1 for key in set(keys) if key not in known)
        stored: dict[int, str] = {}
        if system is not None and document is not None:
            stored = dict(db.session.execute(
                select(Prediction.question_id, Prediction.text).join(Question, Prediction.question_id == Question.id)
                .where(Prediction.system_id == system.id, Question.document_id == document.id)).all())
        for key, row in zip(keys, file.rows):
            text = stored.get(known.get(key, -1))
            if text is None:
                counts.created += 1
            elif text == row.pred:
                counts.unchanged += 1
            else:
                counts.conflicts += 1
        result[file.name] = counts
    return result
