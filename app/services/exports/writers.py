"""Serialise exports: JSON lines, CSV and the results JSON, to a file or an HTTP response body."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.services.exports.leval import leval_filename, leval_lines
from app.services.exports.rows import SCORE_FIELDS, score_rows

FORMATS = ("jsonl", "csv", "leval", "results")
# A spreadsheet runs a cell starting with one of these as a formula; comments are free text.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def jsonl_text(rows: Iterable[dict[str, Any]]) -> str:
    """One compact JSON object per line, UTF-8 kept readable."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def scalar_text(value: Any) -> str:
    """How a row value is written outside a string: as JSON spells it (true, false, 2, 0.5), so the CSV
    reads like the JSON lines; a missing value is an empty cell."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _csv_cell(value: Any) -> str:
    text = scalar_text(value)
    if isinstance(value, str) and text.startswith(FORMULA_START):
        return "'" + text  # shown as text by spreadsheets instead of being evaluated
    return text


def csv_text(rows: Iterable[dict[str, Any]], fields: tuple[str, ...] = SCORE_FIELDS) -> str:
    """CSV with a header row; text cells that a spreadsheet would evaluate are prefixed with '."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: _csv_cell(value) for key, value in row.items()})
    return buffer.getvalue()


def results_text(results: dict[str, Any]) -> str:
    return json.dumps(results, ensure_ascii=False, indent=2) + "\n"


def record_count(fmt: str, text: str) -> int:
    """How many records an export holds: CSV records (a comment may span lines) minus the header, or JSON lines."""
    if fmt == "csv":
        return max(sum(1 for _ in csv.reader(io.StringIO(text))) - 1, 0)
    return text.count("\n")  # json.dumps never writes a raw newline inside a record


def export_text(fmt: str, study_id: int, *, rounds: str = "all", annotator: str | None = None) -> str:
    """Render one export of a study as text; `leval` needs the annotator."""
    if fmt == "jsonl":
        return jsonl_text(score_rows(study_id, rounds, annotator))
    if fmt == "csv":
        return csv_text(score_rows(study_id, rounds, annotator))
    if fmt == "leval":
        if annotator is None:
            raise ValueError("the leval export is per annotator: name one")
        return jsonl_text(leval_lines(study_id, annotator))
    if fmt == "results":
        from app.services.results import full_results

        return results_text(full_results(study_id))
    raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")


def write_leval_folder(folder: Path, study_id: int, annotators: Iterable[str]) -> list[Path]:
    """Write files_from_<name>.jsonl of the study for each annotator into a folder."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for annotator in annotators:
        path = folder / leval_filename(annotator)
        path.write_text(jsonl_text(leval_lines(study_id, annotator)), encoding="utf-8")
        written.append(path)
    return written
