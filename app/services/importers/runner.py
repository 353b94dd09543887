"""Find L-Eval files under a path, recognise their format and import each in its own transaction."""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import BinaryIO, Callable

from app.core.benchmarks.spec import Plugin
from app.core.input_files import NotARegularFile, files_in, open_regular_file, read_regular_file
from app.core.metrics.files import (
    FileFormatError,
    Row,
    describe_file,
    parse_jsonl,
    stream_jsonl,
)
from app.core.text import sha256_bytes
from app.extensions import db
from app.services.benchmarks import plugin_for_file, plugin_for_rows
from app.services.importers.documents import (
    collection_for,
    parse_document_file,
    store_documents,
)
from app.services.importers.predictions import (
    STAGE_ROWS,
    PredictionStager,
    parse_prediction_rows,
    store_predictions,
)
from app.services.planner_statistics import IMPORTED, analyze

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
    # The other benchmarks' files (services.benchmarks), by plugin and model folder: imported per model, after the
    # L-Eval files, one model's files in memory at a time; a model folder with a refused file is not imported at all.
    models: dict[tuple[str, str], tuple[Plugin, list[tuple[str, Path]]]] = {}
    models_refused: dict[tuple[str, str], dict] = {}
    files, refused = find_files(path)
    for entry in refused:
        error = FileFormatError(display_name(entry.path, path), entry.why).as_dict()
        if (owner := plugin_for_file(entry.path)) is not None:
            key = (owner.key, owner.model_of(entry.path))
            models.setdefault(key, (owner, []))
            models_refused.setdefault(key, error)
        else:
            report.files.append(FileReport(file=error["file"], format="unknown", error=error))
    # First pass: check every file and tell its format, keeping neither its bytes nor its rows; then import one
    # file at a time (each in its own transaction, as before): memory holds one file, not the whole folder.
    for file in files:
        name = display_name(file, path)
        follow = file == path  # a file named directly may be a link
        if (owner := plugin_for_file(file)) is not None:
            named = owner.payload_name(file, path) if owner.payload_name else name
            models.setdefault((owner.key, owner.model_of(file)), (owner, []))[1].append((named, file))
            continue
        try:
            with open_regular_file(file, follow=follow) as handle:
                fmt, first = _checked_format(handle, name)
            if fmt == "unknown" and (owner := plugin_for_rows(first.data)) is not None:
                named = owner.payload_name(file, path) if owner.payload_name else name
                models.setdefault((owner.key, owner.model_of(file)), (owner, []))[1].append((named, file))
                continue
            if fmt == "unknown":
                raise FileFormatError(name, "not an L-Eval file: expected 'instructions' or 'query'/'<model>_pred' keys",
                                      line=first.line)
        except NotARegularFile as exc:  # it changed since it was listed
            report.files.append(FileReport(file=name, format="unknown", error=FileFormatError(name, exc.why).as_dict()))
            continue
        except FileFormatError as exc:
            report.files.append(FileReport(file=name, format="unknown", error=exc.as_dict()))
            continue
        loaded.append((FORMAT_ORDER[fmt], name, file, fmt, follow))
    loaded.sort(key=lambda item: (item[0], item[1]))
    for _, name, file, fmt, follow in loaded:
        if progress:
            progress(name)
        if fmt == "predictions":  # the long files: parsed, matched and written in chunks
            try:
                report.files.append(import_prediction_file(file, name, follow=follow, replace=replace,
                                                           uploaded_by_id=uploaded_by_id, demo=demo))
            except NotARegularFile as exc:  # changed since the first pass
                report.files.append(FileReport(file=name, format=fmt, error=FileFormatError(name, exc.why).as_dict()))
            continue
        try:
            raw = read_regular_file(file, follow=follow)
            rows = parse_jsonl(raw, name)
        except NotARegularFile as exc:  # changed since the first pass
            report.files.append(FileReport(file=name, format=fmt, error=FileFormatError(name, exc.why).as_dict()))
            continue
        except FileFormatError as exc:  # changed since the first pass
            report.files.append(FileReport(file=name, format=fmt, error=exc.as_dict()))
            continue
        report.files.append(import_rows(file, name, fmt, rows, raw, replace=replace, uploaded_by_id=uploaded_by_id,
                                        demo=demo))
        del raw, rows
    for (key, system), (owner, named) in models.items():
        if progress:
            progress(system)
        error = models_refused.get((key, system))
        payloads = []
        for name, file in named:  # one model's folder at a time
            if error is None:
                try:
                    payloads.append((name, read_regular_file(file, follow=file == path)))
                except NotARegularFile as exc:  # changed since it was listed
                    error = FileFormatError(name, exc.why).as_dict()
        if error is not None:
            report.files.append(FileReport(file=f"{system or owner.label + ' data'}/ ({owner.label}, not imported)",
                                           format=owner.key, error=error))
            continue
        report.files.append(import_model(owner, system, payloads, replace=replace, uploaded_by_id=uploaded_by_id,
                                         demo=demo))
        del payloads
    if len(report.failed) < len(report.files):
        analyze(*IMPORTED)
    return report


def _checked_format(handle: BinaryIO, name: str) -> tuple[str, Row]:
    """The format of a file whose every line parses (else the first bad line's error) and its first row, from
    which it is told; read as a stream, one line at a time. "unknown" is for the caller to refuse or hand on."""
    first: Row | None = None
    for item in stream_jsonl(handle, name):
        if first is None:
            first = item
    if first is None:
        raise FileFormatError(name, "the file has no JSON lines")
    return detect_format(first), first


def import_model(owner: Plugin, system: str, payloads: list[tuple[str, bytes]], *, replace: bool,
                 uploaded_by_id: int | None, demo: bool = False) -> FileReport:
    """One model folder of another benchmark as one report line: imported whole, or its first error."""
    model = owner.import_model(system, payloads, replace=replace, uploaded_by_id=uploaded_by_id, demo=demo)
    # A benchmark's own data files (its questions and documents) belong to no system (model_of gives "").
    where = f"{system}/ ({owner.label}," if system else f"{owner.label} data ("
    result = FileReport(file=f"{where} {len(payloads)} files)", format=owner.key,
                        rows=model.counts.get("rows", 0), counts=model.counts)
    if model.errors:
        result.error = model.errors[0]
    return result


def import_prediction_file(file: Path, name: str, *, follow: bool = False, replace: bool = False,
                           uploaded_by_id: int | None = None, demo: bool = False) -> FileReport:
    """Import one `.pred.jsonl` file in a single transaction, streamed: STAGE_ROWS rows at a time are parsed,
    matched and written, so memory holds one chunk whatever the file's length. A bad row anywhere rolls the
    whole file back, as import_rows does."""
    task, system = describe_file(file, fallback=False)
    result = FileReport(file=name, format="predictions")
    with _file_transaction(result), open_regular_file(file, follow=follow) as handle:
        digest = hashlib.sha256()
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
        handle.seek(0)
        rows, stager = stream_jsonl(handle, name), None
        while chunk := list(islice(rows, STAGE_ROWS)):
            result.rows += len(chunk)
            parsed = parse_prediction_rows(chunk, name, system, task, pred_key=stager.pred_key if stager else None)
            stager = stager or PredictionStager(parsed.system, parsed.task, parsed.pred_key, name=name,
                                                sha256=digest.hexdigest(), uploaded_by_id=uploaded_by_id,
                                                replace=replace, demo=demo)
            stager.add(parsed.rows)
        if stager is None:
            raise FileFormatError(name, "the file has no JSON lines")
        result.counts = asdict(stager.finish())
    return result


def import_rows(
    file: Path, name: str, fmt: str, rows: list[Row], raw: bytes, *, replace: bool = False,
    uploaded_by_id: int | None = None, stored_path: str = "", demo: bool = False,
) -> FileReport:
    """Import one parsed file in a single transaction."""
    result = FileReport(file=name, format=fmt, rows=len(rows))
    with _file_transaction(result):
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
        result.counts = asdict(counts)
    return result


@contextmanager
def _file_transaction(result: FileReport) -> Iterator[None]:
    """One file's work committed whole, or rolled back whole: a FileFormatError becomes the report's error."""
    try:
        yield
        db.session.commit()
    except FileFormatError as exc:
        db.session.rollback()
        result.error = exc.as_dict()
    except Exception:
        db.session.rollback()
        raise
