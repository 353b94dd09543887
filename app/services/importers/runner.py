"""Find L-Eval files under a path, recognise their format and import each in its own transaction."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from app.core.input_files import NotARegularFile, files_in, read_regular_file
from app.core.metrics.files import (
    FileFormatError,
    Row,
    describe_file,
    is_lveval_file_name,
    parse_jsonl,
)
from app.core.text import sha256_bytes
from app.extensions import db
from app.services.importers.documents import (
    collection_for,
    parse_document_file,
    store_documents,
)
from app.services.importers.predictions import parse_prediction_rows, store_predictions

# Documents first, so prediction rows find their questions in the same run.
FORMAT_ORDER = {"references": 0, "task": 1, "predictions": 2}


@dataclass
class FileReport:
    file: str
    format: str
    rows: int = 0
    counts: dict = field(default_factory=dict)
    error: dict | None = None


@dataclass
class ImportReport:
    files: list[FileReport] = field(default_factory=list)

    @property
    def failed(self) -> list[FileReport]:
        return [f for f in self.files if f.error]

    @property
    def unmatched_human(self) -> int:
        return sum(f.counts.get("unmatched_human", 0) for f in self.files)

    @property
    def unmatched(self) -> int:
        return sum(f.counts.get("unmatched", 0) for f in self.files)

    def as_dict(self) -> dict:
        return {"files": [asdict(f) for f in self.files], "unmatched": self.unmatched}


def detect_format(row: Row) -> str:
    """Name a file's format from its first row's keys."""
    keys = set(row.data)
    if "instructions" in keys and keys & {"gpt4_outputs", "claude_outputs"}:
        return "references"
    if "instructions" in keys:
        return "task"
    if "query" in keys or any(k.endswith("_pred") for k in keys):
        return "predictions"
    return "unknown"


def find_files(path: Path) -> tuple[list[Path], list[NotARegularFile]]:
    """The .jsonl files under a checkout, a folder or one file, in a stable order; and the entries so named that
    are no regular file inside the folder (a link, a named pipe, …: core/input_files.py), each refused by name."""
    try:
        return files_in(path, (".jsonl",))
    except FileNotFoundError:
        raise FileFormatError(str(path), "no such file or folder") from None
    except NotARegularFile as exc:
        raise FileFormatError(str(path), exc.why) from None


def display_name(path: Path, root: Path) -> str:
    try:
        rel = path.relative_to(root if root.is_dir() else root.parent)
    except ValueError:
        return str(path)
    return str(rel) if root.is_dir() else path.name


def import_path(
    path: Path, *, replace: bool = False, uploaded_by_id: int | None = None,
    progress: Callable[[str], None] | None = None, demo: bool = False,
) -> ImportReport:
    """Import every L-Eval file under `path`; a bad file is rolled back whole and reported.

    `demo` marks what is created as the shipped demo (kept out of real studies, deleted with it).
    """
    path = Path(path)
    report = ImportReport()
    loaded = []
    lveval: dict[str, list[tuple[str, bytes]]] = {}
    lveval_refused: dict[str, dict] = {}  # an LV-Eval model folder with a refused file is not imported at all
    files, refused = find_files(path)
    for entry in refused:
        error = FileFormatError(display_name(entry.path, path), entry.why).as_dict()
        if is_lveval_file_name(entry.path):
            lveval.setdefault(entry.path.parent.name, [])
            lveval_refused.setdefault(entry.path.parent.name, error)
        else:
            report.files.append(FileReport(file=error["file"], format="unknown", error=error))
    for file in files:
        name = display_name(file, path)
        try:
            raw = read_regular_file(file, follow=file == path)  # a file named directly may be a link
        except NotARegularFile as exc:  # it changed since it was listed
            report.files.append(FileReport(file=name, format="unknown", error=FileFormatError(name, exc.why).as_dict()))
            continue
        if is_lveval_file_name(file):  # LV-Eval model folders are imported per model, after the L-Eval files
            lveval.setdefault(file.parent.name, []).append((name, raw))
            continue
        try:
            rows = parse_jsonl(raw, name)
            fmt = detect_format(rows[0])
            if fmt == "unknown":
                raise FileFormatError(name, "not an L-Eval file: expected 'instructions' or 'query'/'<model>_pred' keys", line=rows[0].line)
        except FileFormatError as exc:
            report.files.append(FileReport(file=name, format="unknown", error=exc.as_dict()))
            continue
        loaded.append((FORMAT_ORDER[fmt], name, file, fmt, rows, raw))
    loaded.sort(key=lambda item: (item[0], item[1]))
    for _, name, file, fmt, rows, raw in loaded:
        if progress:
            progress(name)
        report.files.append(import_rows(file, name, fmt, rows, raw, replace=replace, uploaded_by_id=uploaded_by_id,
                                        demo=demo))
    for system, payloads in lveval.items():
        if progress:
            progress(system)
        if system in lveval_refused:
            report.files.append(FileReport(file=f"{system}/ (LV-Eval, not imported)", format="lveval",
                                           error=lveval_refused[system]))
            continue
        report.files.append(import_lveval_model(system, payloads, replace=replace, uploaded_by_id=uploaded_by_id,
                                                demo=demo))
    return report


def import_lveval_model(system: str, payloads: list[tuple[str, bytes]], *, replace: bool,
                        uploaded_by_id: int | None, demo: bool = False) -> FileReport:
    """One LV-Eval model folder as one report line: imported whole, or its first error."""
    from app.services.lveval import import_payloads

    model = import_payloads(system, payloads, replace=replace, uploaded_by_id=uploaded_by_id, demo=demo)
    result = FileReport(file=f"{system}/ (LV-Eval, {len(payloads)} files)", format="lveval",
                        rows=model.counts.get("rows", 0), counts=model.counts)
    if model.errors:
        result.error = model.errors[0]
    return result


def import_rows(
    file: Path, name: str, fmt: str, rows: list[Row], raw: bytes, *, replace: bool = False,
    uploaded_by_id: int | None = None, stored_path: str = "", demo: bool = False,
) -> FileReport:
    """Import one parsed file in a single transaction."""
    result = FileReport(file=name, format=fmt, rows=len(rows))
    try:
        if fmt == "predictions":
            task, system = describe_file(file, fallback=False)
            parsed = parse_prediction_rows(rows, name, system, task)
            counts = store_predictions(
                parsed, name=name, sha256=sha256_bytes(raw), stored_path=stored_path,
                uploaded_by_id=uploaded_by_id, replace=replace, demo=demo,
            )
        else:
            docs = parse_document_file(rows, name, fmt)
            counts = store_documents(docs, collection=collection_for(fmt), name=name, demo=demo)
        db.session.commit()
        result.counts = asdict(counts)
    except FileFormatError as exc:
        db.session.rollback()
        result.error = exc.as_dict()
    except Exception:
        db.session.rollback()
        raise
    return result
