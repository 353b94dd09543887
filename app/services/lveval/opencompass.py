"""OpenCompass's LV-Eval predictions (LVEval_<dataset>_<level>.json), LV-Eval's half of the OpenCompass seam
(app.core.benchmarks.spec.OpencompassReader).

A row is matched on content against the LV-Eval questions stored from LV-Eval's own files (their documents are not
stored): the answers its `gold` holds must equal the question's and the question's text must appear in its prompt.
The gold's shape is its loader's (app.core.opencompass.lveval_gold): seven loaders append the answer keywords, which
the row then keeps as its own `gold_ans`, as LV-Eval's file of the same model would; the other rows take the
question's keywords. A dataset and level is stored as one LV-Eval file, all its parts together.
"""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import select

from app.core.metrics.files import LvevalRow, lveval_dataset
from app.core.metrics.lveval.evaluation import LvevalFile
from app.core.opencompass import OcProblem, OcRow, lveval_gold
from app.core.text import normalize_ws
from app.extensions import db
from app.models import Document, LvevalItem, Question
from app.models.corpus import LVEVAL
from app.services.input_rules import text_problem
from app.services.lveval.store import answers_json, preview_model, store_model


@dataclass
class MatchedLveval:
    """Rows rebuilt as LV-Eval rows (in dataset order) for services.lveval's store, and the rows refused."""

    rows: list[tuple[OcRow, LvevalRow]] = field(default_factory=list)
    problems: list[tuple[OcRow, OcProblem]] = field(default_factory=list)


def match_lveval(task: str, rows: list[OcRow]) -> MatchedLveval:
    """Match rows of one LV-Eval dataset and level (`<dataset>_<level>`) to its stored questions."""
    result = MatchedLveval()
    by_answers: dict[str, list[tuple[str, str, str | None]]] = defaultdict(list)
    for instruction, answers, gold_ans in db.session.execute(
        select(Question.instruction, LvevalItem.answers, LvevalItem.gold_ans)
        .join(Document, Question.document_id == Document.id).join(LvevalItem, LvevalItem.question_id == Question.id)
        .where(Document.collection == LVEVAL, Document.task == task).order_by(LvevalItem.occurrence, Question.id)
    ):
        by_answers[answers].append((instruction, answers, gold_ans))
    taken: dict[tuple[str, str], int] = defaultdict(int)
    for row in sorted(rows, key=lambda r: r.index):
        problem = _lveval_row(task, row, by_answers, taken, result)
        if problem is not None:
            result.problems.append((row, problem))
    return result


def _lveval_row(task: str, row: OcRow, by_answers: dict[str, list[tuple[str, str, str | None]]],
                taken: dict[tuple[str, str], int], result: MatchedLveval) -> OcProblem | None:
    if problem := text_problem(row.prediction):
        return OcProblem(row.key, "prediction", problem)
    if not by_answers:
        return OcProblem(row.key, None, f"no question of LV-Eval's {task} is stored: upload LV-Eval's own "
                                        f"<model>/{task}.jsonl first (docs/lveval.md)")
    try:
        gold = lveval_gold(lveval_dataset(task), row.gold)
    except ValueError as exc:
        return OcProblem(row.key, "gold", str(exc))
    prompt = normalize_ws(row.prompt)
    found = [c for answers in gold.answers for c in by_answers.get(answers_json(answers), [])
             if normalize_ws(c[0]) in prompt]
    kinds = list(dict.fromkeys((normalize_ws(c[0]), c[1]) for c in found))
    if not found:
        held = "the answers before its last item (the keywords)" if gold.has_keywords else "its gold"
        return OcProblem(row.key, None, f"matches no stored question of {task}: no question whose answers equal "
                                        f"{held} has its text in origin_prompt")
    if len(kinds) > 1:
        return OcProblem(row.key, None, f"matches {len(kinds)} different stored questions of {task}: its gold "
                                        "and prompt fit each of them")
    copies = [c for c in found if (normalize_ws(c[0]), c[1]) == kinds[0]]
    nth = taken[kinds[0]]
    taken[kinds[0]] += 1
    if nth >= len(copies):
        return OcProblem(row.key, None, f"a repeat: {len(copies)} stored question(s) of {task} fit this row, "
                                        "and earlier rows took them")
    instruction, stored_answers, question_keywords = copies[nth]
    answers = json.loads(stored_answers)
    answers = tuple(answers) if isinstance(answers, list) else answers
    keywords = gold.keywords if gold.has_keywords else question_keywords
    result.rows.append((row, LvevalRow(line=row.index + 1, pred=row.prediction, answers=answers, gold_ans=keywords,
                                       input=instruction, length=None, depth=None)))
    return None


def _file(name: str, task: str, matched: MatchedLveval, rows: list[OcRow] | None = None) -> LvevalFile:
    """The matched rows (of these rows only, when given) as LV-Eval's own file of `<dataset>_<level>`."""
    indexes = None if rows is None else {row.index for row in rows}
    dataset, level = task.rsplit("_", 1)
    return LvevalFile(name=name, dataset=dataset, level=level,
                      rows=[lrow for orow, lrow in matched.rows if indexes is None or orow.index in indexes])


def preview_file(preview, task: str, matched: MatchedLveval, rows: list[OcRow]) -> None:
    file = _file(preview.name, task, matched, rows)
    preview.matched, preview.evaluations = len(file.rows), {"lveval": len(file.rows)}
    if preview.ok:
        counts = preview_model(preview.system, [file])[preview.name]
        preview.new, preview.unchanged, preview.conflicts = counts.created, counts.unchanged, counts.conflicts


def store_file(system: str, name: str, task: str, matched: MatchedLveval, *, sha256: str, stored_path: str,
               user_id: int | None, replace: bool) -> dict:
    """One dataset and level as one LV-Eval file: with --replace, LV-Eval's store drops rows the file lacks."""
    counts = store_model(system, [_file(name, task, matched)], sha256s={name: sha256},
                         stored_paths={name: stored_path}, uploaded_by_id=user_id, replace=replace)
    return counts.as_dict()
