"""LongBench's files in an upload: preview each (every bad line, what would be stored) and import each model whole.

`preview` is the upload's FilePreview (services.uploads), read and filled by attribute: this package never imports
the upload package that calls it (app.core.benchmarks.spec.Plugin). A zip of LongBench's `pred/`, `pred_e/` or
`results/` folder (or of a folder above them) keeps the names that say which question set a file answers; a zip of
LongBench's `data/` folder brings its questions and documents.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from app.core.metrics.longbench import V2, VARIANT_LABELS
from app.core.metrics.longbench.files import collect_file, describe_name
from app.services.longbench.importer import is_v2_path, store_files
from app.services.longbench.store import preview_counts, row_errors

KIND = "longbench"
MAX_NOTES = 10


def _variant(name: str) -> str | None:
    return V2 if describe_name(name) is None or is_v2_path(name) else None


def preview_longbench_file(preview, path: Path) -> None:
    """Fill a preview for one of LongBench's files: errors by line and field, counts, notes."""
    preview.kind = KIND
    with path.open("rb") as stream:
        parsed, errors = collect_file(preview.name, stream, variant=_variant(preview.name))
    if parsed is not None:
        errors = row_errors(parsed)
    for error in errors:
        preview.add_error(error.message, line=error.line, field_name=error.field)
    if parsed is None or not preview.ok:
        return
    preview.rows = len(parsed.rows)
    preview.task = parsed.dataset or V2
    if parsed.data:
        preview.system = ""  # LongBench's own questions and documents: no model's
        counts = preview_counts("", parsed)
        preview.evaluations = {f"{VARIANT_LABELS[parsed.variant]} data": len(parsed.rows)}
        preview.new_questions, preview.new = counts.questions_new, counts.questions_new + counts.questions_placed
        preview.unchanged, preview.matched, preview.unmatched = counts.unchanged, len(parsed.rows), 0
        return
    if not preview.system:
        preview.add_error("which model's predictions? zip the file in its folder: <model>/<dataset>.jsonl")
        return
    counts = preview_counts(preview.system, parsed)
    preview.evaluations = {VARIANT_LABELS[parsed.variant]: len(parsed.rows)}
    preview.new_questions = counts.questions_new
    preview.matched, preview.unmatched = len(parsed.rows) - counts.questions_new, 0
    preview.new, preview.unchanged, preview.conflicts = counts.created, counts.unchanged, counts.conflicts
    for row in parsed.rows:
        for note in getattr(row, "notes", ()):
            if len(preview.notes) < MAX_NOTES:
                preview.notes.append({"line": row.line, "field": None, "message": note})


def check_longbench_models(previews: list) -> None:
    """A model (and the data) is imported whole: one file per question set and dataset, none with errors."""
    by_system: dict[str, list] = defaultdict(list)
    for preview in previews:
        if preview.kind == KIND:
            by_system[preview.system].append(preview)
    for system, files in by_system.items():
        seen: dict[tuple, str] = {}
        for preview in files:
            described = describe_name(preview.name)
            key = ("v2", preview.name) if described is None else (described.variant, described.dataset)
            if key in seen:
                preview.add_error(f"a second file for {preview.task} of {system or 'the data'} (the first is "
                                  f"{seen[key]}); keep one")
            seen.setdefault(key, preview.name)
        broken = [f.name for f in files if not f.ok]
        if broken:
            for preview in files:
                if preview.ok:
                    preview.add_error(f"not importable on its own: {system or 'the data'} is imported whole, and "
                                      f"{', '.join(broken[:3])}{' …' if len(broken) > 3 else ''} has errors")


def import_longbench_previews(previews: list, read, keep, *, user_id: int, replace: bool) -> list:
    """Store each model's previewed files (the data's first) in the caller's transaction."""
    by_system: dict[str, list] = defaultdict(list)
    for preview in previews:
        by_system[preview.system].append(preview)
    results = []
    for system in sorted(by_system, key=lambda name: (name != "", name)):
        parsed, sha256s, stored = [], {}, {}
        for preview in by_system[system]:
            path = read(preview)
            with path.open("rb") as stream:
                item, errors = collect_file(preview.name, stream, variant=_variant(preview.name))
            errors = errors or row_errors(item)
            if errors or item is None:
                raise errors[0]
            parsed.append(item)
            sha256s[preview.name] = preview.sha256
            stored[preview.name] = keep(preview.sha256, path)
        results.append((system, store_files(system, parsed, sha256s=sha256s, stored_paths=stored,
                                            uploaded_by_id=user_id, replace=replace)))
    return results
