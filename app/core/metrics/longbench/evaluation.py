"""Score LongBench without a database: one dataset's rows as eval.py scores its file, and a model's result.json."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from app.core.metrics.longbench import E
from app.core.metrics.longbench.scores import RowScore, row_score
from app.core.metrics.longbench.table import Cell, bucket_scores, file_score, result_json_text
from app.core.metrics.profiles import OFFICIAL, resolve_profile


class ScoredRow(Protocol):
    pred: str
    answers: Sequence[str]
    all_classes: Sequence[str] | None
    length: int | float | None


def score_dataset(dataset: str, variant: str, rows: Sequence[ScoredRow], *,
                  profile: str = OFFICIAL) -> tuple[list[RowScore], Cell]:
    """Each row's score and the dataset's number in result.json: its file score, or LongBench-E's buckets.

    eval.py keeps the `all_classes` of the file's last row and passes it for every row (quirk
    longbench_all_classes): the official profile does; fixed gives each row its own.
    """
    profile = resolve_profile(profile)
    if not rows:
        raise ValueError(f"{dataset}: no rows")
    last_classes = rows[-1].all_classes
    scored = [row_score(dataset, row.pred, row.answers, last_classes if profile == OFFICIAL else row.all_classes,
                        profile=profile) for row in rows]
    if variant == E:
        return scored, bucket_scores(((s.value, row.length) for s, row in zip(scored, rows)), profile=profile)
    return scored, file_score([s.value for s in scored])


@dataclass
class ModelResult:
    """One model's result.json (v1 or LongBench-E) under one profile, with the notes of rows scored 0 for a crash."""

    variant: str
    profile: str
    cells: dict[str, Cell] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[dict] = field(default_factory=list)

    @property
    def result_json_text(self) -> str:
        return result_json_text(self.cells)


def evaluate_files(files: Iterable, variant: str, *, profile: str = OFFICIAL) -> ModelResult:
    """result.json of a model's parsed prediction files (files.LongbenchFile, one per dataset)."""
    result = ModelResult(variant=variant, profile=resolve_profile(profile))
    for file in files:
        scored, cell = score_dataset(file.dataset, variant, file.rows, profile=profile)
        result.cells[file.dataset] = cell
        result.counts[file.dataset] = len(scored)
        result.notes += [{"file": file.name, "line": row.line, "note": s.note}
                         for s, row in zip(scored, file.rows) if s.note]
    return result
