"""Validate one uploaded prediction file without writing anything: rows, system, evaluations, matches, errors."""
from __future__ import annotations

from collections import Counter
from pathlib import Path, PurePosixPath

from app.core.metrics.files import (
    FileFormatError,
    Row,
    describe_file,
    is_lveval_row,
    iter_jsonl,
)
from app.core.opencompass import is_opencompass_file
from app.services.benchmarks import plugin_for_file, plugin_for_rows
from app.services.importers.predictions import (
    parse_prediction_rows,
    preview_predictions,
)
from app.services.importers.runner import detect_format
from app.services.input_rules import system_name_problem, upload_name_problem
from app.services.uploads.document_files import DOCUMENT_FORMATS, preview_document_file
from app.services.uploads.file_preview import FilePreview


def read_rows(preview: FilePreview, path: Path) -> list[Row]:
    """Parse every line as a stream, recording each bad one instead of stopping at the first."""
    rows: list[Row] = []
    with path.open("rb") as stream:
        for item in iter_jsonl(stream, preview.name):
            if isinstance(item, FileFormatError):
                preview.add_error(item.message, line=item.line)
            else:
                rows.append(item)
    return rows


def name_system(preview: FilePreview, system_override: str | None, *, everywhere: bool = False) -> None:
    """Set system and task from the layout (`<model>/<task>.pred.jsonl`, `<model>.pred.jsonl`).

    The form's system name is used only for files named after a task with no folder around them; with
    `everywhere` (the API's `system`), it names the system of every file, and `named_system` keeps the
    name the layout gave (the API refuses an upload whose files name several systems).
    """
    task, system = describe_file(PurePosixPath(preview.name), fallback=False)
    preview.named_system = system
    stem_is_task = bool(task) and not system
    if everywhere and system_override:
        system, stem_is_task = system_override, False
    if stem_is_task and system_override:
        # A browser sends `quality.pred.jsonl` without its `<model>/` folder: the form names the system.
        system, stem_is_task = system_override, False
    if stem_is_task:
        preview.add_error(
            f"the file is named after the task '{task}': give the system name in the upload form, "
            f"or upload a zip laid out as <model>/{task}.pred.jsonl"
        )
    elif problem := system_name_problem(system):
        preview.add_error(problem)
    preview.system, preview.task = system, task


def _check_format(preview: FilePreview, rows: list[Row]) -> bool:
    first = rows[0]
    if is_lveval_row(first.data):
        preview.add_error(
            "an LV-Eval prediction file (answers/pred), but its name is not <dataset>_<level>.jsonl with one of "
            "LV-Eval's datasets and levels", line=first.line,
        )
        return False
    if detect_format(first) != "predictions":
        preview.add_error("not a file this page reads: it takes prediction rows {query, gt, <model>_pred, evaluation}, "
                          "L-Eval task or reference rows {instructions, outputs, input, …} and LV-Eval model folders",
                          line=first.line)
        return False
    return True


def _check_rows(preview: FilePreview, rows: list[Row]) -> None:
    """Validate rows one by one, so every bad line is reported."""
    try:
        preview.pred_key = parse_prediction_rows(rows[:1], preview.name, preview.system, preview.task).pred_key
    except FileFormatError as exc:
        preview.add_error(exc.message, line=exc.line, field_name=exc.field)
        return
    for row in rows[1:]:
        try:
            if preview.pred_key not in row.data:
                raise FileFormatError(preview.name, "missing; every row must use the same prediction key as line "
                                    f"{rows[0].line}", line=row.line, field=preview.pred_key)
            parse_prediction_rows([row], preview.name, preview.system, preview.task)
        except FileFormatError as exc:
            preview.add_error(exc.message, line=exc.line, field_name=exc.field)


def _first_row(path: Path, name: str) -> Row | None:
    with path.open("rb") as stream:
        first = next(iter_jsonl(stream, name), None)
    return first if isinstance(first, Row) else None


def _count_evaluations(preview: FilePreview, rows: list[Row]) -> None:
    preview.rows = len(rows)
    preview.evaluations = dict(sorted(Counter(
        str(row.data.get("evaluation") or "(none)") for row in rows
    ).items()))


def preview_file(name: str, path: Path, sha256: str, size: int, *, system_override: str | None = None,
                 system_everywhere: bool = False) -> FilePreview:
    """Validate one `.pred.jsonl` payload (a file, read as a stream) and count its matches (read-only)."""
    preview = FilePreview(name=name, sha256=sha256, size=size)
    if problem := upload_name_problem(name):
        preview.name = name.replace("\x00", "\\u0000")[:200] + ("…" if len(name) > 200 else "")
        preview.add_error(problem)
        return preview
    if is_opencompass_file(name):  # read with the other parts of its dataset (uploads.opencompass_files)
        from app.services.uploads.opencompass_files import preview_opencompass_file

        preview_opencompass_file(preview)
        return preview
    first = _first_row(path, name)
    owner = plugin_for_file(name)  # another benchmark's layout (services.benchmarks)
    if first is not None and owner is None and detect_format(first) in DOCUMENT_FORMATS:
        # An L-Eval task or reference file: documents, questions and references, stored before any prediction.
        rows = read_rows(preview, path)
        _count_evaluations(preview, rows)
        preview_document_file(preview, rows, detect_format(first))  # names every bad line, JSON or field
        preview.errors.sort(key=lambda error: error["line"] or 0)
        return preview
    everywhere = system_everywhere and bool(system_override)
    name_system(preview, system_override, everywhere=everywhere)
    # Another benchmark's rows under a name that does not place them: its preview reads them (or names the problem).
    reader = owner or (plugin_for_rows(first.data) if first is not None else None)
    if preview.ok and reader is not None:
        if not everywhere:  # its layout names the model, unless the API's `system` names every file's
            preview.system = reader.model_of(PurePosixPath(name)) or system_override or preview.system
        reader.preview_file(preview, path)
        return preview
    rows = read_rows(preview, path)
    _count_evaluations(preview, rows)
    if not rows:
        if preview.ok:
            preview.add_error("the file has no JSON lines")
        return preview
    if not _check_format(preview, rows):
        return preview
    _check_rows(preview, rows)
    if not preview.ok:
        preview.errors.sort(key=lambda error: error["line"] or 0)
        return preview
    parsed = parse_prediction_rows(rows, preview.name, preview.system, preview.task)
    try:
        counts = preview_predictions(parsed, name=preview.name)
    except FileFormatError as exc:
        preview.add_error(exc.message, line=exc.line, field_name=exc.field)
        return preview
    preview.matched, preview.unmatched = counts.matched, counts.unmatched
    preview.unmatched_examples, preview.unmatched_lines = counts.unmatched_examples, counts.unmatched_lines
    preview.new, preview.unchanged, preview.conflicts = counts.created, counts.unchanged, counts.conflicts
    if not counts.matched:
        preview.add_error("no row matches a stored question: upload L-Eval's task files or its human-eval reference "
                          "file first (on this page), then this file" + _subset_hint(counts.unmatched_in_subset))
    elif counts.unmatched_in_subset:
        preview.notes.append({"line": None, "field": None,
                              "message": _subset_hint(counts.unmatched_in_subset).removeprefix("; ")})
    return preview


def _subset_hint(rows: int) -> str:
    if not rows:
        return ""
    return (f"; {rows} row(s) have the question of a human-evaluation question, but only rows whose "
            "evaluation is 'human' are matched there (others are matched in the task files)")
