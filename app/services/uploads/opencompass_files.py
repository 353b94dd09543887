"""OpenCompass files in an upload or a folder: preview them (errors by file and key) and import them.

A model's dataset is read whole, its `_0`, `_1`, … parts in order: rows are matched on content
(services.opencompass) across all parts, and the dataset is imported whole or not at all. Each model
folder becomes a system; its rows are stored as `.pred.jsonl` uploads store theirs.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from app.core.metrics.files import FileFormatError
from app.core.opencompass import (
    LEVAL_DATASETS,
    OcName,
    OcRow,
    describe_path,
    part_problems,
)
from app.services.importers.predictions import (
    ParsedPredictionFile,
    preview_predictions,
    store_predictions,
)
from app.services.input_rules import system_name_problem
from app.services.opencompass import Matched, match_leval, parsed_file, read_file
from app.services.uploads.file_preview import FilePreview

KIND = "opencompass"
PathOf = Callable[[FilePreview], Path]


def preview_opencompass_file(preview: FilePreview) -> None:
    """What the file's path says: model (the system), dataset and part; problems of the name alone."""
    name = describe_path(preview.name)
    preview.kind, preview.system, preview.task = KIND, name.model, name.task
    if problem := system_name_problem(name.model):
        preview.add_error(f"the model folder: {problem}")
    if not name.benchmark:
        preview.add_error(f"unknown dataset {name.abbr!r}: OpenCompass's L-Eval datasets are "
                          f"{', '.join(sorted(LEVAL_DATASETS))}")
    elif name.benchmark == "lveval":
        preview.add_error(f"{name.abbr} is an LV-Eval dataset: OpenCompass's LV-Eval predictions are not imported "
                          "yet; upload LV-Eval's own <model>/<dataset>_<level>.jsonl files (docs/lveval.md)")


@dataclass
class _Dataset:
    task: str
    files: list[FilePreview]  # in part order


def _datasets(previews: list[FilePreview]) -> list[_Dataset]:
    groups: dict[tuple[str, str], list[tuple[OcName, FilePreview]]] = defaultdict(list)
    for preview in previews:
        if preview.kind == KIND:
            name = describe_path(preview.name)
            groups[name.dataset_key].append((name, preview))
    result = []
    for members in groups.values():
        members.sort(key=lambda item: -1 if item[0].part is None else item[0].part)
        result.append(_Dataset(members[0][0].task, [preview for _, preview in members]))
    return result


def _read(dataset: _Dataset, path_of: PathOf) -> tuple[list[list[OcRow]], Matched]:
    """Each file's rows (keys numbered across the parts) and the matches of the rows that read cleanly."""
    rows_by_file, offset = [], 0
    for preview in dataset.files:
        parsed = read_file(path_of(preview), offset=offset)
        for problem in parsed.problems:
            preview.add_error(problem.message, field_name=problem.where)
        rows_by_file.append(parsed.rows)
        preview.rows = len(parsed.rows) + len({p.key for p in parsed.problems if p.key is not None})
        offset += preview.rows
    return rows_by_file, match_leval(dataset.task, [row for rows in rows_by_file for row in rows])


def _file_part(preview: FilePreview, rows: list[OcRow], matched: Matched) -> tuple[ParsedPredictionFile, list]:
    keys = {row.index for row in rows}
    assignments = [(row, qid) for row, qid in matched.assignments if row.line - 1 in keys]
    part = Matched(assignments=assignments)
    return parsed_file(preview.system, preview.task, part), assignments


def preview_opencompass(previews: list[FilePreview], path_of: PathOf) -> None:
    """Check parts, read and match each model's dataset whole, and fill each file's counts (read-only)."""
    problems = part_problems([describe_path(p.name) for p in previews if p.kind == KIND])
    for dataset in _datasets(previews):
        for preview in dataset.files:
            if problem := problems.get(describe_path(preview.name)):
                preview.add_error(problem)
        if all(preview.ok for preview in dataset.files):
            _preview_dataset(dataset, path_of)
        broken = [preview.name for preview in dataset.files if not preview.ok]
        for preview in dataset.files:
            if preview.ok and broken:
                preview.add_error(f"not importable on its own: the parts of a dataset are imported together, and "
                                  f"{', '.join(broken[:3])}{' …' if len(broken) > 3 else ''} has errors")


def _preview_dataset(dataset: _Dataset, path_of: PathOf) -> None:
    rows_by_file, matched = _read(dataset, path_of)
    for preview, rows in zip(dataset.files, rows_by_file):
        indexes = {row.index for row in rows}
        refused = [(row, problem) for row, problem in matched.problems if row.index in indexes]
        for _, problem in refused:
            preview.add_error(problem.message, field_name=problem.where)
        parsed, assignments = _file_part(preview, rows, matched)
        preview.unmatched = len(refused)
        preview.evaluations = dict(sorted(Counter(row.evaluation or "(none)" for row in parsed.rows).items()))
        if not preview.ok:
            preview.matched = len(assignments)
            continue
        counts = preview_predictions(parsed, name=preview.name, assignments=assignments)
        preview.matched, preview.pred_key = counts.matched, parsed.pred_key
        preview.new, preview.unchanged, preview.conflicts = counts.created, counts.unchanged, counts.conflicts


def import_opencompass_previews(previews: list[FilePreview], read: PathOf, keep: Callable[[str, Path], str], *,
                                user_id: int | None, replace: bool) -> list[dict]:
    """Store the previewed files in the caller's transaction; raise FileFormatError (nothing kept) on any problem.

    `read` gives a file's payload path, `keep(sha256, path)` keeps it and returns the path to record.
    """
    results = []
    for dataset in _datasets(previews):
        rows_by_file, matched = _read(dataset, read)
        bad = next((p for p in dataset.files if not p.ok), None)
        if bad is not None:
            raise FileFormatError(bad.name, bad.errors[0]["message"], field=bad.errors[0]["field"])
        for row, problem in matched.problems:
            preview = next(p for p, rows in zip(dataset.files, rows_by_file) if row.index in {r.index for r in rows})
            raise FileFormatError(preview.name, problem.message, field=problem.where)
        for preview, rows in zip(dataset.files, rows_by_file):
            parsed, assignments = _file_part(preview, rows, matched)
            path = read(preview)
            counts = store_predictions(parsed, name=preview.name, sha256=preview.sha256, stored_path=keep(
                preview.sha256, path), uploaded_by_id=user_id, replace=replace, assignments=assignments)
            results.append({"file": preview.name, **asdict(counts)})
    return results
