"""Serialise exports: JSON lines, CSV and the results JSON, to a file or an HTTP response body."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from app.services.exports.leval import leval_filename, leval_lines
from app.services.exports.rows import SCORE_FIELDS, iter_score_rows, iter_score_values

FORMATS = ("jsonl", "csv", "leval", "results")
# A spreadsheet runs a cell starting with one of these as a formula; comments are free text.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_FIRST = frozenset(FORMULA_START)


# Characters gathered before a streamed export hands a piece on: few enough to keep memory flat, many enough
# that the response is written in large sends.
CHUNK_CHARS = 64 * 1024


def _pieces(lines: Iterable[str]) -> Iterator[str]:
    buffer: list[str] = []
    size = 0
    for line in lines:
        buffer.append(line)
        size += len(line)
        if size >= CHUNK_CHARS:
            yield "".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer)


def jsonl_chunks(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """One compact JSON object per line, UTF-8 kept readable, in pieces of about CHUNK_CHARS."""
    return _pieces(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def jsonl_text(rows: Iterable[dict[str, Any]]) -> str:
    return "".join(jsonl_chunks(rows))


def scalar_text(value: Any) -> str:
    """How a row value is written outside a string: as JSON spells it (true, false, 2, 0.5), so the CSV
    reads like the JSON lines; a missing value is an empty cell."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)  # what json.dumps writes, without its machinery (most cells are ids and scores)
    return json.dumps(value, ensure_ascii=False)


def _csv_cell(value: Any) -> str:
    if value.__class__ is str:  # most cells: tested first, with one set lookup (an export has half a million)
        return "'" + value if value[:1] in _FORMULA_FIRST else value  # shown as text, not evaluated
    text = scalar_text(value)
    if isinstance(value, str) and text.startswith(FORMULA_START):
        return "'" + text
    return text


def csv_chunks(rows: Iterable[dict[str, Any]], fields: tuple[str, ...] = SCORE_FIELDS) -> Iterator[str]:
    """CSV with a header row, in pieces of about CHUNK_CHARS; text cells that a spreadsheet would evaluate
    are prefixed with '."""
    return csv_value_chunks((tuple(map(row.get, fields)) for row in rows), fields)


def csv_value_chunks(rows: Iterable[tuple[Any, ...]], fields: tuple[str, ...] = SCORE_FIELDS) -> Iterator[str]:
    """csv_chunks of rows given as tuples in `fields` order (the scores export: no dict per row)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(fields)
    for row in rows:
        writer.writerow([_csv_cell(value) for value in row])
        if buffer.tell() >= CHUNK_CHARS:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue()


def csv_text(rows: Iterable[dict[str, Any]], fields: tuple[str, ...] = SCORE_FIELDS) -> str:
    return "".join(csv_chunks(rows, fields))


def results_text(results: dict[str, Any]) -> str:
    return json.dumps(results, ensure_ascii=False, indent=2) + "\n"


def record_count(fmt: str, text: str) -> int:
    """How many records an export holds: CSV records (a comment may span lines) minus the header, or JSON lines."""
    if fmt == "csv":
        return max(sum(1 for _ in csv.reader(io.StringIO(text))) - 1, 0)
    return text.count("\n")  # json.dumps never writes a raw newline inside a record


def export_chunks(fmt: str, study_id: int, *, rounds: str = "all", annotator: str | None = None) -> Iterator[str]:
    """Render one export of a study in pieces (scores stream from the database); `leval` needs the annotator."""
    if fmt == "jsonl":
        return jsonl_chunks(iter_score_rows(study_id, rounds, annotator))
    if fmt == "csv":
        return csv_value_chunks(iter_score_values(study_id, rounds, annotator))
    if fmt == "leval":
        if annotator is None:
            raise ValueError("the leval export is per annotator: name one")
        return jsonl_chunks(leval_lines(study_id, annotator))
    if fmt == "results":
        from app.services.results import full_results

        return iter([results_text(full_results(study_id))])
    raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")


def export_text(fmt: str, study_id: int, *, rounds: str = "all", annotator: str | None = None) -> str:
    """Render one export of a study as text; `leval` needs the annotator."""
    return "".join(export_chunks(fmt, study_id, rounds=rounds, annotator=annotator))


def write_leval_folder(folder: Path, study_id: int, annotators: Iterable[str]) -> list[Path]:
    """Write files_from_<name>.jsonl of the study for each annotator into a folder."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for annotator in annotators:
        path = folder / leval_filename(annotator)
        path.write_text(jsonl_text(leval_lines(study_id, annotator)), encoding="utf-8")
        written.append(path)
    return written
