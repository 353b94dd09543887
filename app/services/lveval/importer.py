"""Import LV-Eval model folders from disk: each model whole or not at all, every problem by file, line and field."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from app.core.benchmarks.report import ImportReport, ModelReport
from app.core.input_files import NotARegularFile, files_in, open_regular_file, read_regular_file
from app.core.metrics.files import (
    FileFormatError,
    Row,
    is_lveval_file_name,
    is_lveval_row,
    iter_jsonl,
)
from app.core.metrics.lveval.evaluation import LvevalFile, collect_lveval_file
from app.core.metrics.lveval.rows import input_notes
from app.core.text import sha256_bytes
from app.extensions import db
from app.services.input_rules import lveval_row_errors, system_name_problem
from app.services.lveval.store import store_model
from app.services.planner_statistics import IMPORTED, analyze

MAX_NOTES = 50


class LvevalImportReport(ImportReport):
    """LV-Eval's models of one import (app.core.benchmarks.report)."""


def find_models(path: Path, system: str | None = None) -> tuple[dict[str, list[Path]], dict[str, list[dict]]]:
    """LV-Eval files under `path`, by model: the folder holding them (or `system` for a single folder or file);
    and by model, the errors of the entries named like its files that are no regular file inside the folder (a
    link, a named pipe, …: core/input_files.py): such a model is not imported."""
    path = Path(path)
    try:
        candidates, refused = files_in(path, (".jsonl",))
    except FileNotFoundError:
        raise FileFormatError(str(path), "no such file or folder") from None
    except NotARegularFile as exc:
        raise FileFormatError(str(path), exc.why) from None
    files = [p for p in candidates if is_lveval_file_name(p) or _starts_with_lveval_row(p, follow=p == path)]
    models: dict[str, list[Path]] = defaultdict(list)
    problems: dict[str, list[dict]] = defaultdict(list)
    for file in files:
        models[system or file.parent.name].append(file)
    for entry in refused:
        models.setdefault(system or entry.path.parent.name, [])
        problems[system or entry.path.parent.name].append(
            FileFormatError(_display(entry.path, path.parent), entry.why).as_dict())
    if system and len({f.parent for f in files} | {e.path.parent for e in refused}) > 1:
        raise FileFormatError(str(path), "holds several model folders: --system names one model's folder only")
    return dict(models), dict(problems)


def _starts_with_lveval_row(path: Path, *, follow: bool) -> bool:
    """An LV-Eval row under another file name is still LV-Eval's: import reports its name instead of skipping it."""
    with open_regular_file(path, follow=follow) as handle:
        for line in handle:
            if line.strip():
                first = next(iter_jsonl(line, path.name), None)
                return isinstance(first, Row) and is_lveval_row(first.data)
    return False


def parse_model(system: str, payloads: list[tuple[str, bytes]]) -> tuple[list[LvevalFile], list[dict], list[dict]]:
    """Parse a model's files: (files, errors, notes). Any error means the model must not be imported."""
    files, errors, notes = [], [], []
    if problem := system_name_problem(system):
        errors.append(FileFormatError(f"{system[:120]}/", problem).as_dict())
    seen: dict[tuple[str, str], str] = {}
    for name, raw in payloads:
        parsed, problems = collect_lveval_file(name, raw)
        if parsed is not None:
            problems = lveval_row_errors(parsed)
            parsed = None if problems else parsed
        errors += [problem.as_dict() for problem in problems]
        if parsed is None:
            continue
        cell = (parsed.dataset, parsed.level)
        if cell in seen:
            errors.append(FileFormatError(name, f"a second file for {parsed.dataset}_{parsed.level} in {system} "
                                                f"(the first is {seen[cell]}); keep one per dataset and level").as_dict())
            continue
        seen[cell] = name
        files.append(parsed)
        for row in parsed.rows:
            for note in (*row.notes, *input_notes(parsed.dataset, row.answers, row.gold_ans)):
                if len(notes) < MAX_NOTES:
                    notes.append({"file": name, "line": row.line, "field": None, "message": note})
    return files, errors, notes


def import_models(path: Path, *, system: str | None = None, replace: bool = False,
                  uploaded_by_id: int | None = None, demo: bool = False) -> LvevalImportReport:
    """Import every model folder under `path`, each in its own transaction."""
    report = LvevalImportReport()
    root = Path(path)
    models, refused = find_models(root, system)
    for name, paths in models.items():
        base = root.parent  # names read `<model>/<dataset>_<level>.jsonl`
        try:
            payloads = [(_display(p, base), read_regular_file(p, follow=p == root)) for p in paths]
        except NotARegularFile as exc:  # it changed since it was listed
            refused.setdefault(name, []).append(FileFormatError(_display(exc.path, base), exc.why).as_dict())
        if name in refused:
            report.models.append(ModelReport(system=name, files=[_display(p, base) for p in paths],
                                             errors=refused[name]))
            continue
        report.models.append(import_payloads(name, payloads, replace=replace, uploaded_by_id=uploaded_by_id,
                                             demo=demo))
    if len(report.failed) < len(report.models):
        analyze(*IMPORTED)
    return report


def _display(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return path.name


def import_payloads(system: str, payloads: list[tuple[str, bytes]], *, replace: bool = False,
                    uploaded_by_id: int | None = None, stored_paths: dict[str, str] | None = None,
                    demo: bool = False) -> ModelReport:
    """Validate and store one model's files in one transaction; on any error store nothing."""
    model = ModelReport(system=system, files=[name for name, _ in payloads])
    files, model.errors, model.warnings = parse_model(system, payloads)
    if model.errors:
        return model
    try:
        counts = store_model(system, files, sha256s={name: sha256_bytes(raw) for name, raw in payloads},
                             stored_paths=stored_paths or {}, uploaded_by_id=uploaded_by_id, replace=replace,
                             demo=demo)
        db.session.commit()
    except Exception:
        db.session.rollback()
        raise
    model.counts = counts.as_dict()
    return model
