"""Prediction uploads: unpack, preview without writing, then import the valid files in one transaction.

Confirming imports every valid file of the preview or none of them: all files go through one
database transaction, and a file that fails on confirm (say, the questions changed since the
preview) rolls the whole upload back. Files with errors are shown in the preview and skipped.
A batch is imported once: a second confirm (even a simultaneous one) says it already was.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import BinaryIO

from flask import current_app
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app.core.metrics.files import FileFormatError, parse_jsonl
from app.core.text import normalize_ws
from app.extensions import db
from app.models import System, UploadBatch
from app.services.benchmarks import PLUGINS
from app.services.importers.documents import DocumentCounts
from app.services.importers.predictions import parse_prediction_rows, store_predictions
from app.services.input_rules import column_length
from app.services.planner_statistics import IMPORTED, analyze
from app.services.uploads.archive import (
    UploadRejected,
    ZipLimits,
    clean_upload_name,
    unpack_upload,
)
from app.services.uploads.document_files import import_document_previews
from app.services.uploads.file_preview import DOCUMENTS_KIND
from app.services.uploads.opencompass_files import KIND as OPENCOMPASS_KIND
from app.services.uploads.opencompass_files import (
    import_opencompass_previews,
    preview_opencompass,
)
from app.services.uploads.preview import FilePreview, preview_file
from app.services.uploads.staging import (
    BATCH_ID_RE,
    Batch,
    StagingError,
    discard_batch,
    finish_batch,
    keep_file,
    load_batch,
    new_batch,
    read_staged,
    stage_batch,
    staging_root,
    sweep_stale,
)

__all__ = [
    "AlreadyImported", "Batch", "ConfirmResult", "FilePreview", "FileFormatError", "ImportConflict", "NothingToImport",
    "StagingError", "UploadRejected", "confirm_batch", "confirm_upload", "discard_batch", "load_batch",
    "preview_upload",
]
# The preview kinds of the other benchmarks' files: their keys (services.benchmarks).
PLUGIN_KINDS = tuple(plugin.key for plugin in PLUGINS)
# How often a confirm that collided with another import (the same new system, the same batch) is retried.
CONFIRM_ATTEMPTS = 5


class AlreadyImported(Exception):
    """The batch was confirmed before; `record` says what it imported."""

    def __init__(self, record: UploadBatch):
        self.record = record
        systems = ", ".join(record.systems.splitlines())
        super().__init__(f"this upload was already imported: {record.files} file(s), {record.predictions} "
                         f"prediction(s) for {systems or 'no system'}")


class NothingToImport(Exception):
    """A batch without a single valid file: confirming it must not report success."""


class ImportConflict(Exception):
    """Other imports kept changing the same rows; nothing of this one was imported."""


def zip_limits() -> ZipLimits:
    config = current_app.config
    return ZipLimits(max_bytes=config["LEVAL_MAX_UNZIPPED_MB"] * 1024 * 1024, max_members=config["LEVAL_MAX_ZIP_MEMBERS"])


def preview_upload(uploads: list[tuple[str, BinaryIO]], *, user_id: int, system_override: str = "",
                   system_everywhere: bool = False) -> Batch:
    """Validate uploaded files (name, binary stream) and stage the valid ones; nothing reaches the database.

    `system_override` names the system of files named after a task (the page's form), or of every file
    (`system_everywhere`, the API's `system`).

    Streams and zip members are spooled to files chunk by chunk and parsed line by line, so memory
    stays bounded whatever the upload holds.
    """
    sweep_stale()
    system_override = normalize_ws(system_override)[:column_length(System.name) + 1]
    batch = new_batch(user_id, system_override)
    spooled: dict[str, Path] = {}
    seen: set[tuple[str, str]] = set()
    limits = zip_limits()
    try:
        for filename, stream in uploads:
            try:
                unpacked = unpack_upload(filename, stream, limits, staging_root())
            except UploadRejected as exc:
                batch.rejected.append(str(exc))
                continue
            batch.ignored += [f"{clean_upload_name(filename)}: {name}" for name in unpacked.ignored]
            for member in unpacked.members:
                preview = preview_file(member.name, member.path, member.sha256, member.size,
                                       system_override=system_override or None,
                                       system_everywhere=system_everywhere)
                if (preview.system, preview.sha256) in seen:
                    preview.add_error("the same file for the same system appears earlier in this upload")
                seen.add((preview.system, preview.sha256))
                if member.sha256 in spooled:  # the same bytes twice: one staged copy
                    member.path.unlink(missing_ok=True)
                else:
                    spooled[member.sha256] = member.path
                batch.files.append(preview)
        preview_opencompass(batch.files, lambda preview: spooled[preview.sha256])
        for plugin in PLUGINS:  # another benchmark's model is imported whole
            plugin.check_models(batch.files)
        cap_new_systems(batch.files, current_app.config["LEVAL_MAX_NEW_SYSTEMS"])
    except BaseException:
        for path in spooled.values():
            path.unlink(missing_ok=True)
        raise
    return stage_batch(batch, spooled)


def cap_new_systems(previews: list[FilePreview], limit: int) -> None:
    """Refuse the files of every new system past the first `limit` of one upload (docs/uploads.md, "Limits")."""
    # A benchmark's data files (its questions) name no system.
    names = list(dict.fromkeys(p.system for p in previews if p.ok and p.kind != DOCUMENTS_KIND and p.system))
    known = set(db.session.scalars(select(System.name).where(System.name.in_(names)))) if names else set()
    new = [name for name in names if name not in known]
    refused = set(new[limit:])
    for preview in previews:
        if preview.ok and preview.kind != DOCUMENTS_KIND and preview.system in refused:
            preview.add_error(f"one upload may create at most {limit} new systems (LEVAL_MAX_NEW_SYSTEMS); "
                              f"this file's system {preview.system!r} would be number {new.index(preview.system) + 1}"
                              f" of {len(new)}: upload it separately")


@dataclass
class ConfirmResult:
    files: list[dict] = field(default_factory=list)  # per prediction file; one line per LV-Eval model
    systems: list[System] = field(default_factory=list)
    file_count: int = 0  # every file imported, counted as the preview counts its importable files
    documents: list[DocumentCounts] = field(default_factory=list)  # per task or reference file

    @property
    def predictions(self) -> int:
        return sum(f.get("created", 0) + f.get("replaced", 0) for f in self.files)

    @property
    def summary(self) -> str:
        """What was imported, in the preview's units: "Imported 55 files: 550 predictions stored for alpha"."""
        parts = []
        if self.documents:
            parts.append(f"{len(self.documents)} task or reference file{'' if len(self.documents) == 1 else 's'} "
                         f"({sum(c.documents for c in self.documents)} documents, "
                         f"{sum(c.questions for c in self.documents)} questions)")
        if self.systems:
            parts.append(f"{self.predictions} predictions stored for {', '.join(s.name for s in self.systems)}")
        return f"Imported {self.file_count} file{'' if self.file_count == 1 else 's'}: {'; '.join(parts)}"


def confirmed_batch(batch_id: str, user_id: int) -> UploadBatch | None:
    record = db.session.get(UploadBatch, batch_id) if BATCH_ID_RE.match(batch_id or "") else None
    return record if record is not None and record.user_id == user_id else None


def confirm_upload(batch_id: str, *, user_id: int, replace: bool = False) -> ConfirmResult:
    """Import the user's previewed batch; raise AlreadyImported when it was confirmed before."""
    try:
        batch = load_batch(batch_id, user_id)
    except StagingError:
        record = confirmed_batch(batch_id, user_id)
        if record is not None:
            raise AlreadyImported(record) from None
        raise
    return confirm_batch(batch, user_id=user_id, replace=replace)


def confirm_batch(batch: Batch, *, user_id: int, replace: bool = False) -> ConfirmResult:
    """Import the batch's valid files in one transaction; raise and import nothing on any problem.

    The transaction starts by recording the batch, so two confirms of one batch serialise on its
    key (the second raises AlreadyImported); an import that collides with another on a unique row
    (say, both create the same new system) is rolled back whole and retried.
    """
    if not batch.valid_files:
        raise NothingToImport("no file of this upload can be imported; fix the errors shown and upload again")
    for attempt in range(CONFIRM_ATTEMPTS):
        try:
            result = _import_batch(batch, user_id=user_id, replace=replace)
            db.session.commit()
            break
        except IntegrityError:
            db.session.rollback()
            record = confirmed_batch(batch.id, user_id)
            if record is not None:
                raise AlreadyImported(record) from None
            if attempt == CONFIRM_ATTEMPTS - 1:
                raise ImportConflict("other imports kept changing the same systems at the same time; nothing was "
                                     "imported, please confirm again") from None
            time.sleep(0.05 * (attempt + 1))
        except Exception:  # FileFormatError, StagingError or worse: the upload lands whole or not at all
            db.session.rollback()
            raise
    finish_batch(batch)
    analyze(*IMPORTED)
    return result


def _import_batch(batch: Batch, *, user_id: int, replace: bool) -> ConfirmResult:
    record = UploadBatch(id=batch.id, user_id=user_id)
    db.session.add(record)
    db.session.flush()  # first write of the transaction: a second confirm of this batch waits here, then fails
    result = ConfirmResult(file_count=len(batch.valid_files))
    names: list[str] = []
    # Documents first, so this upload's questions exist before any prediction is stored.
    result.documents = import_document_previews(
        [preview for preview in batch.valid_files if preview.kind == DOCUMENTS_KIND], read_staged)
    for plugin in PLUGINS:  # the other benchmarks' model folders, one model at a time
        previews = [preview for preview in batch.valid_files if preview.kind == plugin.key]
        for system, counts in plugin.import_previews(previews, read_staged, keep_file, user_id=user_id,
                                                     replace=replace):
            result.files.append({"file": ", ".join(p.name for p in previews if p.system == system),
                                 **counts.as_dict()})
            if system and system not in names:  # a benchmark's data files name no system
                names.append(system)
    opencompass = [preview for preview in batch.valid_files if preview.kind == OPENCOMPASS_KIND]
    for counts in import_opencompass_previews(opencompass, read_staged, keep_file, user_id=user_id, replace=replace):
        result.files.append(counts)
        if counts["system"] not in names:
            names.append(counts["system"])
    for preview in batch.valid_files:
        if preview.kind in (*PLUGIN_KINDS, OPENCOMPASS_KIND, DOCUMENTS_KIND):
            continue
        path = read_staged(preview)
        with path.open("rb") as stream:
            rows = parse_jsonl(stream, preview.name)
        parsed = parse_prediction_rows(rows, preview.name, preview.system, preview.task)
        # The file is kept before the commit: one left by a rolled-back upload is content-addressed and harmless.
        counts = store_predictions(
            parsed, name=preview.name, sha256=preview.sha256, stored_path=keep_file(preview.sha256, path),
            uploaded_by_id=user_id, replace=replace,
        )
        result.files.append({"file": preview.name, **asdict(counts)})
        if counts.system not in names:
            names.append(counts.system)
    record.files, record.predictions, record.systems = result.file_count, result.predictions, "\n".join(names)
    result.systems = list(db.session.scalars(select(System).where(System.name.in_(names)).order_by(System.name)))
    db.session.flush()
    return result
