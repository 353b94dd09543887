"""Score a system's stored LV-Eval predictions as LV-Eval's evaluation.py does, and store its table.

Per row: the raw score in [0, 1] (MetricResult `lveval_raw`; an exact double, so the table can be
recomputed to the digit). Per system: each dataset-and-level cell exactly as result.json has it
(MetricAggregate `lveval`, task `<dataset>_<level>`), and the paper's averages (`lveval_avg`: task
`<dataset>`, `lveval@<level>` and `lveval@all`).
"""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlalchemy import func, select

from app.core.metrics import PROFILES
from app.core.metrics.lveval.rows import score_row
from app.core.metrics.lveval.table import averages, file_score
from app.core.metrics.profiles import OFFICIAL
from app.extensions import db
from app.models import (
    Document,
    LvevalItem,
    Prediction,
    Question,
)
from app.models.base import utcnow
from app.models.corpus import LVEVAL
from app.services.benchmark_scores import replace_scores

ROW_METRIC = "lveval_raw"
CELL_METRIC = "lveval"
AVERAGE_METRIC = "lveval_avg"
OVERALL_TASK = "lveval@all"


def level_task(level: str) -> str:
    return f"lveval@{level}"


@dataclass(frozen=True)
class StoredRow:
    prediction_id: int
    question_id: int
    dataset: str
    level: str
    line_no: int
    text: str
    answers: tuple[str, ...] | str
    gold_ans: str | None  # the prediction's own row's keywords
    question_gold_ans: str | None  # the keywords the question was first imported with

    def keywords(self, profile: str) -> str | None:
        """The gold_ans a profile scores this row with (quirk lveval_gold_per_folder): evaluation.py reads each
        model folder's own rows; the fixed profile gives every model the question's one set of keywords."""
        return self.gold_ans if profile == OFFICIAL else self.question_gold_ans


def load_rows(system_id: int) -> list[StoredRow]:
    """The system's LV-Eval predictions, cell by cell in file order (the order LV-Eval sums in)."""
    stmt = (
        select(Prediction.id, Prediction.question_id, LvevalItem.dataset, LvevalItem.level, Prediction.line_no,
               Prediction.text, LvevalItem.answers, Prediction.gold_ans, LvevalItem.gold_ans)
        .join(Question, Prediction.question_id == Question.id)
        .join(Document, Question.document_id == Document.id)
        .join(LvevalItem, LvevalItem.question_id == Question.id)
        .where(Prediction.system_id == system_id, Document.collection == LVEVAL)
        .order_by(Document.task, Prediction.line_no, Prediction.id)
    )
    rows = []
    for pid, qid, dataset, level, line_no, text, answers, gold, question_gold in db.session.execute(stmt):
        parsed = json.loads(answers)
        rows.append(StoredRow(pid, qid, dataset, level, line_no, text,
                              parsed if isinstance(parsed, str) else tuple(parsed), gold, question_gold))
    return rows


def lveval_prediction_count(system_id: int) -> int:
    """How many LV-Eval predictions a system has: the units a metrics job counts for LV-Eval."""
    stmt = (select(func.count(Prediction.id)).join(Question, Prediction.question_id == Question.id)
            .join(Document, Question.document_id == Document.id)
            .where(Prediction.system_id == system_id, Document.collection == LVEVAL))
    return db.session.scalar(stmt) or 0


def has_lveval(system_id: int) -> bool:
    stmt = (select(Prediction.id).join(Question, Prediction.question_id == Question.id)
            .join(Document, Question.document_id == Document.id)
            .where(Prediction.system_id == system_id, Document.collection == LVEVAL).limit(1))
    return db.session.scalar(stmt) is not None


def table_rows(cells: dict[tuple[str, str], float], counts: dict[tuple[str, str], int]) -> list[dict]:
    """The aggregate rows of one profile: every cell, then the paper's averages."""
    rows = [{"task": f"{d}_{level}", "metric": CELL_METRIC, "value": value, "n": counts[(d, level)]}
            for (d, level), value in cells.items()]
    summary = averages(cells)
    for dataset, value in summary["per_dataset"].items():
        rows.append({"task": dataset, "metric": AVERAGE_METRIC, "value": value,
                     "n": sum(1 for d, _ in cells if d == dataset)})
    for level, value in summary["per_level"].items():
        rows.append({"task": level_task(level), "metric": AVERAGE_METRIC, "value": value,
                     "n": sum(1 for _, lv in cells if lv == level)})
    if summary["overall"] is not None:
        rows.append({"task": OVERALL_TASK, "metric": AVERAGE_METRIC, "value": summary["overall"], "n": len(cells)})
    return rows


def score_lveval_system(system_id: int, *, profiles: Iterable[str] = PROFILES, job_id: int | None = None,
                        check_cancelled: Callable[[], None] | None = None) -> dict:
    """Score every LV-Eval prediction of a system under each profile; replace its LV-Eval results and table."""
    profiles = tuple(profiles)
    rows = load_rows(system_id)
    now = utcnow()
    results, aggregates = [], []
    for profile in profiles:
        if check_cancelled:
            check_cancelled()
        by_cell: dict[tuple[str, str], list[float]] = defaultdict(list)
        for row in rows:
            value = score_row(row.dataset, row.text, row.answers, row.keywords(profile), profile=profile).value
            by_cell[(row.dataset, row.level)].append(value)
            results.append({"prediction_id": row.prediction_id, "system_id": system_id,
                            "question_id": row.question_id, "metric": ROW_METRIC, "profile": profile,
                            "value": value, "job_id": job_id, "computed_at": now})
        cells = {cell: file_score(values) for cell, values in by_cell.items()}
        counts = {cell: len(values) for cell, values in by_cell.items()}
        aggregates += [{**row, "system_id": system_id, "profile": profile, "job_id": job_id, "computed_at": now}
                       for row in table_rows(cells, counts)]
    replace_scores(system_id, profiles, row_metric=ROW_METRIC, table_metrics=(CELL_METRIC, AVERAGE_METRIC),
                   results=results, aggregates=aggregates)
    return {"lveval_rows": len(rows), "lveval_cells": len({(r.dataset, r.level) for r in rows})}
