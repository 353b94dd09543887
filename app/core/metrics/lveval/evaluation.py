"""Score LV-Eval model folders without a database: the result.json / result.csv table and the paper's averages."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from app.core.metrics.files import (FileFormatError, LvevalRow, lveval_name, lveval_sort_key, lveval_text, parse_jsonl,
                    parse_lveval_row)
from app.core.metrics.lveval.rows import score_row
from app.core.metrics.lveval.table import averages, file_score, result_csv_text, result_json, result_json_text, table
from app.core.metrics.profiles import OFFICIAL, resolve_profile


@dataclass
class LvevalFile:
    """One parsed `<dataset>_<level>.jsonl`."""

    name: str
    dataset: str
    level: str
    rows: list[LvevalRow]


@dataclass
class LvevalRun:
    """A model folder's scores under one profile."""

    system: str
    profile: str
    cells: dict[tuple[str, str], float] = field(default_factory=dict)
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    notes: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "system": self.system, "profile": self.profile, "scale": "0-100, rounded as LV-Eval's evaluation.py",
            "result_json": result_json(self.cells), "result_csv": result_csv_text(self.cells),
            "table": table(self.cells), "n": {f"{d}_{level}": n for (d, level), n in self.counts.items()},
            "averages": averages(self.cells), "notes": self.notes,
        }


def parse_lveval_file(name: str, raw: bytes) -> LvevalFile:
    """Parse and validate one file; raise FileFormatError naming the file, line and field."""
    dataset, level = lveval_name(name)
    rows = [parse_lveval_row(row, name, dataset) for row in parse_jsonl(lveval_text(raw), name)]
    return LvevalFile(name=name, dataset=dataset, level=level, rows=rows)


def check_unique(files: Iterable[LvevalFile]) -> None:
    """Refuse two files for the same dataset and level (LV-Eval would silently keep the later one)."""
    seen: dict[tuple[str, str], str] = {}
    for item in files:
        key = (item.dataset, item.level)
        if key in seen:
            raise FileFormatError(item.name, f"a second file for {item.dataset}_{item.level} (the first is "
                                             f"{seen[key]}); keep one per dataset and level")
        seen[key] = item.name


def score_files(system: str, files: Iterable[LvevalFile], *, profile: str = OFFICIAL) -> LvevalRun:
    """Score every row and each file's cell, in LV-Eval's file order."""
    profile = resolve_profile(profile)
    run = LvevalRun(system=system, profile=profile)
    for item in sorted(files, key=lambda f: lveval_sort_key(f.name)):
        scores = []
        for row in item.rows:
            scored = score_row(item.dataset, row.pred, row.answers, row.gold_ans, profile=profile)
            scores.append(scored.value)
            if scored.note:
                run.notes.append({"file": item.name, "line": row.line, "note": scored.note})
        run.cells[(item.dataset, item.level)] = file_score(scores)
        run.counts[(item.dataset, item.level)] = len(scores)
    return run


def evaluate_folder(paths: Iterable[Path], system: str, *, profile: str = OFFICIAL) -> LvevalRun:
    """Read, validate and score one model's files (raise FileFormatError on the first bad one)."""
    files = [parse_lveval_file(path.name, path.read_bytes()) for path in paths]
    check_unique(files)
    return score_files(system, files, profile=profile)


__all__ = ["LvevalFile", "LvevalRun", "check_unique", "evaluate_folder", "parse_lveval_file", "result_json_text",
           "score_files"]


MAX_FILE_ERRORS = 20


def collect_lveval_file(name: str, raw: bytes | BinaryIO) -> tuple[LvevalFile | None, list[FileFormatError]]:
    """Parse a file (bytes or a binary file, read as a stream) reporting every bad line (up to MAX_FILE_ERRORS)."""
    from app.core.metrics.files import iter_jsonl

    try:
        dataset, level = lveval_name(name)
    except FileFormatError as error:
        return None, [error]
    rows, errors = [], []
    for item in iter_jsonl(raw, name, cr_ends_lines=True):  # line ends as lveval_text reads them
        try:
            if isinstance(item, FileFormatError):
                raise item
            rows.append(parse_lveval_row(item, name, dataset))
        except FileFormatError as error:
            if len(errors) < MAX_FILE_ERRORS:
                errors.append(error)
    if not rows and not errors:
        errors.append(FileFormatError(name, "the file has no JSON lines"))
    if errors:
        return None, errors
    return LvevalFile(name=name, dataset=dataset, level=level, rows=rows), []
