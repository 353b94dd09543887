"""LV-Eval files in an upload: preview them (every bad line, what would be stored) and import each model whole.

`preview` is the upload's FilePreview (services.uploads), read and filled by attribute: this package never
imports the upload package that calls it (app.core.benchmarks.spec.Plugin).
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from app.core.metrics.lveval.evaluation import collect_lveval_file
from app.core.metrics.lveval.rows import input_notes
from app.services.input_rules import lveval_row_errors
from app.services.lveval.store import ModelCounts, preview_model, store_model

KIND = "lveval"
MAX_NOTES = 10


def preview_lveval_file(preview, path: Path) -> None:
    """Fill a preview for `<model>/<dataset>_<level>.jsonl`: errors by line and field, counts, notes."""
    preview.kind = KIND
    with path.open("rb") as stream:
        parsed, errors = collect_lveval_file(preview.name, stream)
    if parsed is not None:
        errors = lveval_row_errors(parsed)
    for error in errors:
        preview.add_error(error.message, line=error.line, field_name=error.field)
    if parsed is None or not preview.ok:
        return
    preview.rows = len(parsed.rows)
    preview.evaluations = {KIND: len(parsed.rows)}
    counts = preview_model(preview.system, [parsed])[preview.name]
    preview.new_questions = counts.questions_new
    preview.matched = len(parsed.rows) - counts.questions_new
    preview.unmatched = 0
    preview.new, preview.unchanged, preview.conflicts = counts.created, counts.unchanged, counts.conflicts
    for row in parsed.rows:
        for note in (*row.notes, *input_notes(parsed.dataset, row.answers, row.gold_ans)):
            if len(preview.notes) < MAX_NOTES:
                preview.notes.append({"line": row.line, "field": None, "message": note})


def check_lveval_models(previews: list) -> None:
    """A model is imported whole: one file per dataset and level, and no file of it may have errors."""
    by_system: dict[str, list] = defaultdict(list)
    for preview in previews:
        if preview.kind == KIND:
            by_system[preview.system].append(preview)
    for system, files in by_system.items():
        seen: dict[str, str] = {}
        for preview in files:
            cell = preview.task.split(".")[0]
            if cell in seen:
                preview.add_error(f"a second file for {cell} in model {system} (the first is {seen[cell]}); "
                                  "keep one per dataset and level")
            seen.setdefault(cell, preview.name)
        broken = [f.name for f in files if not f.ok]
        if broken:
            for preview in files:
                if preview.ok:
                    preview.add_error(f"not importable on its own: model {system} is imported whole, and "
                                      f"{', '.join(broken[:3])}{' …' if len(broken) > 3 else ''} has errors")


def import_lveval_previews(previews: list, read, keep, *, user_id: int,
                           replace: bool) -> list[tuple[str, ModelCounts]]:
    """Store each model's previewed files in the caller's transaction; `read`/`keep` fetch (a path) and keep payloads."""
    by_system: dict[str, list] = defaultdict(list)
    for preview in previews:
        by_system[preview.system].append(preview)
    results = []
    for system, files in by_system.items():
        parsed, sha256s, stored = [], {}, {}
        for preview in files:
            path = read(preview)
            with path.open("rb") as stream:
                item, errors = collect_lveval_file(preview.name, stream)
            errors = errors or lveval_row_errors(item)
            if errors or item is None:
                raise errors[0]
            parsed.append(item)
            sha256s[preview.name] = preview.sha256
            stored[preview.name] = keep(preview.sha256, path)
        results.append((system, store_model(system, parsed, sha256s=sha256s, stored_paths=stored,
                                            uploaded_by_id=user_id, replace=replace)))
    return results
