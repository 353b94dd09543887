"""OpenCompass files in an upload or a folder: preview them (errors by file and key) and import them.

A model's dataset is read whole, its `_0`, `_1`, … parts in order: rows are matched on content
(services.opencompass) across all parts, and the dataset is imported whole or not at all. Each model
folder becomes a system; L-Eval rows are stored as `.pred.jsonl` uploads store theirs. Another benchmark's
dataset is its plugin's to match and store (app.core.benchmarks.spec.OpencompassReader), all its parts as one
of the benchmark's own files.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.core.benchmarks.registry import BENCHMARKS
from app.core.benchmarks.spec import Plugin
from app.core.metrics.files import FileFormatError
from app.core.opencompass import (
    LEVAL_DATASETS,
    OcName,
    OcRow,
    describe_path,
    part_problems,
)
from app.core.text import sha256_text
from app.services.importers.predictions import (
    ParsedPredictionFile,
    preview_predictions,
    store_predictions,
)
from app.services.benchmarks import plugin
from app.services.input_rules import system_name_problem
from app.services.opencompass import (
    Matched,
    match_leval,
    parsed_file,
    read_file,
)
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
                          f"{', '.join(sorted(LEVAL_DATASETS))}; {other_datasets()}")


def other_datasets() -> str:
    """The other benchmarks' OpenCompass datasets, as an error names them: `LV-Eval's LVEval_…` for each."""
    return "; ".join(f"{b.label}'s: " + ", ".join(sorted(b.opencompass_datasets)[:3]) + ", …"
                     for b in BENCHMARKS if b.opencompass_datasets)


@dataclass
class _Dataset:
    name: OcName
    files: list[FilePreview]  # in part order

    @property
    def plugin(self) -> Plugin | None:
        """The plugin that reads this dataset (None: an L-Eval dataset)."""
        return plugin(self.name.benchmark)


def _datasets(previews: list[FilePreview]) -> list[_Dataset]:
    groups: dict[tuple[str, str], list[tuple[OcName, FilePreview]]] = defaultdict(list)
    for preview in previews:
        if preview.kind == KIND:
            name = describe_path(preview.name)
            groups[name.dataset_key].append((name, preview))
    result = []
    for members in groups.values():
        members.sort(key=lambda item: -1 if item[0].part is None else item[0].part)
        result.append(_Dataset(members[0][0], [preview for _, preview in members]))
    return result


def _read(dataset: _Dataset, path_of: PathOf) -> tuple[list[list[OcRow]], Any]:
    """Each file's rows (keys numbered across the parts) and the matches of the rows that read cleanly."""
    rows_by_file, offset = [], 0
    for preview in dataset.files:
        parsed = read_file(path_of(preview), offset=offset)
        for problem in parsed.problems:
            preview.add_error(problem.message, field_name=problem.where)
        rows_by_file.append(parsed.rows)
        preview.rows = parsed.size
        offset += preview.rows
    rows = [row for part in rows_by_file for row in part]
    match = dataset.plugin.opencompass.match if dataset.plugin else match_leval
    return rows_by_file, match(dataset.name.task, rows)


def _leval_part(preview: FilePreview, rows: list[OcRow], matched: Matched) -> tuple[ParsedPredictionFile, list]:
    keys = {row.index for row in rows}
    assignments = [(row, qid) for row, qid in matched.assignments if row.line - 1 in keys]
    return parsed_file(preview.system, preview.task, Matched(assignments=assignments)), assignments


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
        preview.unmatched = len(refused)
        if dataset.plugin:
            dataset.plugin.opencompass.preview(preview, dataset.name.task, matched, rows)
            continue
        parsed, assignments = _leval_part(preview, rows, matched)
        preview.evaluations = dict(sorted(Counter(row.evaluation or "(none)" for row in parsed.rows).items()))
        preview.matched = len(assignments)
        if preview.ok:
            counts = preview_predictions(parsed, name=preview.name, assignments=assignments)
            preview.pred_key = parsed.pred_key
            preview.new, preview.unchanged, preview.conflicts = counts.created, counts.unchanged, counts.conflicts


def import_opencompass_previews(previews: list[FilePreview], read: PathOf, keep: Callable[[str, Path], str], *,
                                user_id: int | None, replace: bool) -> list[dict]:
    """Store the previewed files in the caller's transaction; raise FileFormatError (nothing kept) on any problem.

    `read` gives a file's payload path, `keep(sha256, path)` keeps it and returns the path to record. Each
    result names its file(s) (another benchmark's dataset: its parts together, joined by ", ").
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
        stored = [keep(preview.sha256, read(preview)) for preview in dataset.files]
        if dataset.plugin:
            results.append(_store_whole(dataset, matched, stored, user_id=user_id, replace=replace))
            continue
        for preview, rows, stored_path in zip(dataset.files, rows_by_file, stored):
            parsed, assignments = _leval_part(preview, rows, matched)
            counts = store_predictions(parsed, name=preview.name, sha256=preview.sha256, stored_path=stored_path,
                                       uploaded_by_id=user_id, replace=replace, assignments=assignments)
            results.append({"file": preview.name, **asdict(counts)})
    return results


def _store_whole(dataset: _Dataset, matched: Any, stored: list[str], *, user_id: int | None, replace: bool) -> dict:
    """A plugin's dataset, all its parts as one of the benchmark's own files (with --replace, the plugin's store
    drops rows that file lacks): named by its first part, its digest that of its parts' digests."""
    files = dataset.files
    name = files[0].name if len(files) == 1 else f"{files[0].name} (+{len(files) - 1} more parts)"
    sha256 = files[0].sha256 if len(files) == 1 else sha256_text("\n".join(p.sha256 for p in files))
    counts = dataset.plugin.opencompass.store(files[0].system, name, dataset.name.task, matched, sha256=sha256,
                                              stored_path=stored[0], user_id=user_id, replace=replace)
    return {"file": ", ".join(p.name for p in files), **counts}
