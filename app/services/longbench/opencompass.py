"""OpenCompass's LongBench predictions (LongBench_<dataset>.json), LongBench's half of the OpenCompass seam
(app.core.benchmarks.spec.OpencompassReader).

OpenCompass's LongBench loaders (opencompass/datasets/longbench/longbench_<dataset>.py) keep one row per row of
LongBench's data file, in its order, and its configs (opencompass/configs/datasets/longbench/) read `answers` as
the gold, except trec's and lsht's, whose gold is `all_labels`: `{"answers", "all_classes"}`. So the row under key
k of a dataset answers the data file's row k + 1, as the (k + 1)-th row of pred.py's file does: it is stored as
that row of `pred/<model>/<dataset>.jsonl` would be, and scored alike. Its gold must equal the answers (and
classes) stored for that row, and once LongBench's data file is imported, the row's document and (where the loader
keeps `input`) its question must appear in its prompt: position alone never places a row.

LongBench v2 (`LongBenchv2`) is refused: OpenCompass's rows hold neither the question's `_id` nor pred.py's
extracted letter, which result.py scores; its own `results/<model>.jsonl` is imported instead.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from sqlalchemy import select

from app.core.metrics.longbench import DATASETS, V1
from app.core.metrics.longbench.benchmark import OPENCOMPASS_WITHOUT_INPUT, V2_TASK
from app.core.metrics.longbench.files import LongbenchFile, PredRow
from app.core.opencompass import OcProblem, OcRow
from app.core.text import normalize_ws
from app.extensions import db
from app.models import Document, Question
from app.services.input_rules import text_problem
from app.services.longbench.store import preview_counts, question_key, stored_items, store_predictions

EVALUATION_LABEL = "LongBench"


@dataclass
class MatchedLongbench:
    """Rows rebuilt as pred.py's rows (in dataset order) for services.longbench's store, and the rows refused."""

    rows: list[tuple[OcRow, PredRow]] = field(default_factory=list)
    problems: list[tuple[OcRow, OcProblem]] = field(default_factory=list)


def _strings(value, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{what} must be a list of strings")
    return tuple(value)


def read_gold(dataset: str, gold) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """(answers, all_classes) of a row's gold, by the shape its config's output_column gives it; ValueError: why not."""
    if DATASETS[dataset].metric == "classification_score":
        if not isinstance(gold, dict) or not {"answers", "all_classes"} <= set(gold):
            raise ValueError(f"OpenCompass's {dataset} config reads all_labels, an object "
                             '{"answers": [...], "all_classes": [...]}')
        return _strings(gold["answers"], "its answers"), _strings(gold["all_classes"], "its all_classes")
    if gold is None:
        raise ValueError("missing: OpenCompass writes the data row's answers as the gold (save_results leaves out "
                         "only an empty one, and every LongBench row has answers)")
    return _strings(gold, f"OpenCompass's {dataset} config reads answers, so the gold"), None


def match_longbench(task: str, rows: list[OcRow]) -> MatchedLongbench:
    """Match the rows of one LongBench dataset (all its parts, in dataset order) to its rows, stored or not."""
    result = MatchedLongbench()
    ordered = sorted(rows, key=lambda r: r.index)
    if task == V2_TASK:
        for row in ordered:
            result.problems.append((row, OcProblem(row.key, None, (
                "LongBench v2 is not read from OpenCompass: its rows hold neither the question's _id nor the letter "
                "pred.py extracts, which result.py scores; import LongBench v2's own results/<model>.jsonl "
                "(docs/longbench.md)"))))
        return result
    keys = {row.index: question_key(V1, task, row.index + 1) for row in ordered}
    stored = stored_items(keys.values())
    texts = {qid: (normalize_ws(instruction), normalize_ws(document)) for qid, instruction, document in
             db.session.execute(select(Question.id, Question.instruction, Document.text)
                                .join(Document, Document.id == Question.document_id)
                                .where(Question.id.in_([item.question_id for item in stored.values()])))}
    for row in ordered:
        problem, pred_row = _row(task, row, stored.get(keys[row.index]), texts)
        if problem is not None:
            result.problems.append((row, problem))
        else:
            result.rows.append((row, pred_row))
    return result


def _row(task: str, row: OcRow, known, texts: dict[int, tuple[str, str]]) -> tuple[OcProblem | None, PredRow | None]:
    if problem := text_problem(row.prediction):
        return OcProblem(row.key, "prediction", problem), None
    try:
        answers, classes = read_gold(task, row.gold)
    except ValueError as exc:
        return OcProblem(row.key, "gold", str(exc)), None
    if bad := next((p for p in map(text_problem, answers) if p), None):
        return OcProblem(row.key, "gold", bad), None
    position = row.index + 1
    where = (f"row {position} of LongBench's {task} as stored (from its data file or a model's file): OpenCompass's "
             "loader keeps the data file's rows in order")
    if known is not None:
        if json.dumps(list(answers), ensure_ascii=False) != known.answers:
            return OcProblem(row.key, "gold", f"its answers differ from {where}"), None
        if classes is not None and known.all_classes is not None and \
                json.dumps(list(classes), ensure_ascii=False) != known.all_classes:
            return OcProblem(row.key, "gold", f"its all_classes differ from {where}"), None
        question, document = texts.get(known.question_id, ("", ""))
        prompt = normalize_ws(row.prompt)
        if document and document not in prompt:
            return OcProblem(row.key, "origin_prompt", f"does not hold the document of {where}"), None
        if question and task not in OPENCOMPASS_WITHOUT_INPUT and question not in prompt:
            return OcProblem(row.key, "origin_prompt", f"does not hold the question of {where}"), None
    return None, PredRow(line=position, position=position, pred=row.prediction, answers=answers,
                         all_classes=classes, length=None)


def _file(name: str, task: str, matched: MatchedLongbench, rows: list[OcRow] | None = None) -> LongbenchFile:
    """The matched rows (of these rows only, when given) as pred.py's `pred/<model>/<dataset>.jsonl`."""
    indexes = None if rows is None else {row.index for row in rows}
    return LongbenchFile(name=name, variant=V1, dataset=task,
                         rows=[prow for orow, prow in matched.rows if indexes is None or orow.index in indexes])


def preview_file(preview, task: str, matched: MatchedLongbench, rows: list[OcRow]) -> None:
    file = _file(preview.name, task, matched, rows)
    preview.matched, preview.evaluations = len(file.rows), {EVALUATION_LABEL: len(file.rows)}
    if preview.ok and file.rows:
        counts = preview_counts(preview.system, file)
        preview.new_questions = counts.questions_new
        preview.new, preview.unchanged, preview.conflicts = counts.created, counts.unchanged, counts.conflicts


def store_file(system: str, name: str, task: str, matched: MatchedLongbench, *, sha256: str, stored_path: str,
               user_id: int | None, replace: bool) -> dict:
    """One dataset as one of pred.py's files: its questions are created where no file stored them yet."""
    counts = store_predictions(system, [_file(name, task, matched)], sha256s={name: sha256},
                               stored_paths={name: stored_path}, uploaded_by_id=user_id, replace=replace)
    return counts.as_dict()
