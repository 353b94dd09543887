"""Import LongBench's files from disk or an upload: LongBench's data files (questions and documents) and each model's
predictions (v1, LongBench-E, v2), every model whole or not at all, every problem by file, line and field."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path, PurePath, PurePosixPath

from app.core.benchmarks.report import ImportReport, ModelReport
from app.core.input_files import NotARegularFile, files_in, read_regular_file
from app.core.metrics.files import FileFormatError
from app.core.metrics.longbench import V2
from app.core.metrics.longbench.files import (PRED_E_FOLDER, LongbenchFile, collect_file, describe_name,
                                              v2_model_name)
from app.core.text import sha256_bytes
from app.extensions import db
from app.services.input_rules import system_name_problem
from app.services.longbench.store import ModelCounts, row_errors, store_data, store_predictions

RESULTS_FOLDER = "results"  # LongBench v2's pred.py and result.py
DATA_FOLDER = "data"  # LongBench's data.zip
MAX_NOTES = 50


class LongbenchImportReport(ImportReport):
    """LongBench's models of one import (app.core.benchmarks.report)."""


def _parts(path: str | PurePath) -> tuple[str, ...]:
    return PurePosixPath(str(path).replace("\\", "/")).parts


def is_v2_path(path: str | PurePath) -> bool:
    """A file in a `results/` folder (v2's pred.py writes `results/<model>.jsonl`), not one of v1's names."""
    parts = _parts(path)
    return len(parts) >= 2 and parts[-2] == RESULTS_FOLDER and describe_name(path) is None


def model_of(path: str | PurePath) -> str:
    """The system a file belongs to: v2's file name before its last dot (as result.py names it), a v1 or
    LongBench-E file's folder; "" for LongBench's data files (`<dataset>_e.jsonl`, or any file of a `data/` folder:
    LongBench's data.zip holds `data/<dataset>.jsonl`)."""
    described = describe_name(path)
    if described is None:
        return v2_model_name(path)
    parts = _parts(path)
    if described.data or len(parts) < 2 or parts[-2] == DATA_FOLDER:
        return ""
    return parts[-2]


def payload_name(file: Path, root: Path) -> str:
    """A file's name from the nearest `pred`, `pred_e`, `results` or `data` folder on its path (so the name still says
    LongBench-E when the folder named is `pred_e` itself or one of its models), else from the folder named."""
    parts = file.parts
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] in ("pred", PRED_E_FOLDER, RESULTS_FOLDER, DATA_FOLDER):
            return "/".join(parts[index:])
    try:
        return file.relative_to(root.parent).as_posix()
    except ValueError:
        return file.name


def parse_files(system: str, payloads: list[tuple[str, bytes]], *, variant: str | None = None
                ) -> tuple[list[LongbenchFile], list[dict], list[dict]]:
    """Parse a model's (or the data's) files: (files, errors, notes). Any error means nothing of it is imported."""
    files, errors, notes = [], [], []
    if system and (problem := system_name_problem(system)):
        errors.append(FileFormatError(f"{system[:120]}/", problem).as_dict())
    seen: dict[tuple[str, str, bool], str] = {}
    for name, raw in payloads:
        forced = V2 if variant == V2 or is_v2_path(name) else variant
        parsed, problems = collect_file(name, raw, variant=forced)
        if parsed is not None:
            problems = row_errors(parsed)
            parsed = None if problems else parsed
        errors += [problem.as_dict() for problem in problems]
        if parsed is None:
            continue
        key = (parsed.variant, parsed.dataset, parsed.data)
        if key in seen:
            what = "data file" if parsed.data else f"file of {system}"
            errors.append(FileFormatError(name, f"a second {what} for {parsed.dataset or 'LongBench v2'} (the first is "
                                                f"{seen[key]}); keep one").as_dict())
            continue
        seen[key] = name
        files.append(parsed)
        for row in parsed.rows:
            for note in getattr(row, "notes", ()):
                if len(notes) < MAX_NOTES:
                    notes.append({"file": name, "line": row.line, "field": None, "message": note})
    return files, errors, notes


def import_payloads(system: str, payloads: list[tuple[str, bytes]], *, replace: bool = False,
                    uploaded_by_id: int | None = None, stored_paths: dict[str, str] | None = None,
                    demo: bool = False, variant: str | None = None) -> ModelReport:
    """Validate and store one model's files (and any data files beside them) in one transaction; on any error
    store nothing. `variant` forces LongBench-E ("e") or v2 ("v2") where the names do not say."""
    report = ModelReport(system=system, files=[name for name, _ in payloads])
    files, report.errors, report.warnings = parse_files(system, payloads, variant=variant)
    predictions = [f for f in files if not f.data]
    if not report.errors and predictions and not system:
        report.errors.append(FileFormatError(predictions[0].name, "which model's predictions? the file's folder "
                                                                  "names its model: <model>/<dataset>.jsonl").as_dict())
    if report.errors:
        return report
    try:
        counts = store_files(system, files, sha256s={n: sha256_bytes(r) for n, r in payloads},
                             stored_paths=stored_paths or {}, uploaded_by_id=uploaded_by_id, replace=replace, demo=demo)
        db.session.commit()
    except Exception:
        db.session.rollback()
        raise
    report.counts = counts.as_dict()
    return report


def store_files(system: str, files: list[LongbenchFile], *, sha256s: dict[str, str], stored_paths: dict[str, str],
                uploaded_by_id: int | None, replace: bool, demo: bool = False) -> ModelCounts:
    """Store parsed files in the caller's transaction: the data files first, then the model's predictions."""
    counts = ModelCounts(system=system, files=len(files))
    for file in (f for f in files if f.data):
        counts.rows += len(file.rows)
        store_data(file, counts, demo=demo)
    predictions = [f for f in files if not f.data]
    if predictions:
        stored = store_predictions(system, predictions, sha256s=sha256s, stored_paths=stored_paths,
                                   uploaded_by_id=uploaded_by_id, replace=replace, demo=demo)
        for key, value in stored.as_dict().items():
            if key not in ("system", "files"):
                setattr(counts, key, getattr(counts, key) + value)
    return counts


def find_models(path: Path, *, system: str | None = None) -> tuple[dict[str, list[tuple[Path, str]]], dict[str, list]]:
    """LongBench's files under `path` by system ("" for the data files); and the refused entries by system."""
    path = Path(path)
    try:
        candidates, refused = files_in(path, (".jsonl", ".json"))
    except FileNotFoundError:
        raise FileFormatError(str(path), "no such file or folder") from None
    except NotARegularFile as exc:
        raise FileFormatError(str(path), exc.why) from None
    models: dict[str, list[tuple[Path, str]]] = defaultdict(list)
    problems: dict[str, list] = defaultdict(list)
    for file in candidates:
        name = payload_name(file, path)
        if describe_name(name) is None and not is_v2_path(name) and file != path:
            continue  # result.json and other files beside LongBench's
        owner = system if system and describe_name(name) is not None and not describe_name(name).data else None
        models[owner or model_of(name)].append((file, name))
    for entry in refused:
        name = payload_name(entry.path, path)
        if describe_name(name) is not None or is_v2_path(name):
            problems[system or model_of(name)].append(FileFormatError(name, entry.why).as_dict())
    return dict(models), dict(problems)


def import_path(path: Path, *, system: str | None = None, variant: str | None = None, replace: bool = False,
                uploaded_by_id: int | None = None) -> LongbenchImportReport:
    """Import everything LongBench under `path`: its data files first, then each model in its own transaction."""
    report = LongbenchImportReport()
    root = Path(path)
    models, refused = find_models(root, system=system)
    for name in sorted(models, key=lambda n: (n != "", n)):  # the data files (system "") first
        entries = models[name]
        try:
            payloads = [(display, read_regular_file(file, follow=file == root)) for file, display in entries]
        except NotARegularFile as exc:  # it changed since it was listed
            refused.setdefault(name, []).append(FileFormatError(str(exc.path), exc.why).as_dict())
            payloads = []
        if name in refused:
            report.models.append(ModelReport(system=name, files=[d for _, d in entries], errors=refused[name]))
            continue
        report.models.append(import_payloads(name, payloads, replace=replace, uploaded_by_id=uploaded_by_id,
                                             variant=variant))
    return report
