"""Prediction uploads: unpack, preview without writing, then import the valid files in one transaction.

Confirming imports every valid file of the preview or none of them: all files go through one
database transaction, and a file that fails on confirm (say, the questions changed since the
preview) rolls the whole upload back. Files with errors are shown in the preview and skipped.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from flask import current_app
from sqlalchemy import select

from ...extensions import db
from ...models import System
from ...metrics.files import FileFormatError, parse_jsonl
from ..importers.predictions import parse_prediction_rows, store_predictions
from ...text import normalize_ws
from .lveval_files import KIND as LVEVAL_KIND, check_lveval_models, import_lveval_previews
from .archive import UploadRejected, ZipLimits, clean_upload_name, unpack_upload
from .preview import MAX_SYSTEM_NAME, FilePreview, preview_file
from .staging import Batch, StagingError, discard_batch, finish_batch, keep_file, load_batch, new_batch, read_staged
from .staging import stage_batch, sweep_stale

__all__ = [
    "Batch", "ConfirmResult", "FilePreview", "FileFormatError", "StagingError", "UploadRejected", "confirm_batch", "discard_batch",
    "load_batch", "preview_upload",
]


def zip_limits() -> ZipLimits:
    config = current_app.config
    return ZipLimits(max_bytes=config["LEVAL_MAX_UNZIPPED_MB"] * 1024 * 1024, max_members=config["LEVAL_MAX_ZIP_MEMBERS"])


def preview_upload(uploads: list[tuple[str, bytes]], *, user_id: int, system_override: str = "") -> Batch:
    """Validate uploaded files (name, bytes) and stage the valid ones; nothing reaches the database."""
    sweep_stale()
    system_override = normalize_ws(system_override)[:MAX_SYSTEM_NAME + 1]
    batch = new_batch(user_id, system_override)
    payloads: dict[str, bytes] = {}
    seen: set[tuple[str, str]] = set()
    limits = zip_limits()
    for filename, data in uploads:
        try:
            unpacked = unpack_upload(filename, data, limits)
        except UploadRejected as exc:
            batch.rejected.append(str(exc))
            continue
        batch.ignored += [f"{clean_upload_name(filename)}: {name}" for name in unpacked.ignored]
        for member in unpacked.members:
            preview = preview_file(member.name, member.data, system_override=system_override or None)
            if (preview.system, preview.sha256) in seen:
                preview.add_error("the same file for the same system appears earlier in this upload")
            seen.add((preview.system, preview.sha256))
            payloads[preview.sha256] = member.data
            batch.files.append(preview)
    check_lveval_models(batch.files)
    return stage_batch(batch, payloads)


@dataclass
class ConfirmResult:
    files: list[dict] = field(default_factory=list)
    systems: list[System] = field(default_factory=list)


def confirm_batch(batch: Batch, *, user_id: int, replace: bool = False) -> ConfirmResult:
    """Import the batch's valid files in one transaction; raise FileFormatError or StagingError and import nothing."""
    result = ConfirmResult()
    names: list[str] = []
    try:
        lveval = [preview for preview in batch.valid_files if preview.kind == LVEVAL_KIND]
        for system, counts in import_lveval_previews(lveval, read_staged, keep_file, user_id=user_id, replace=replace):
            result.files.append({"file": ", ".join(p.name for p in lveval if p.system == system), **counts.as_dict()})
            names.append(system)
        for preview in batch.valid_files:
            if preview.kind == LVEVAL_KIND:
                continue
            raw = read_staged(preview)
            parsed = parse_prediction_rows(parse_jsonl(raw, preview.name), preview.name, preview.system, preview.task)
            # The file is kept before the commit: one left by a rolled-back upload is content-addressed and harmless.
            counts = store_predictions(
                parsed, name=preview.name, sha256=preview.sha256, stored_path=keep_file(preview.sha256, raw),
                uploaded_by_id=user_id, replace=replace,
            )
            result.files.append({"file": preview.name, **asdict(counts)})
            if counts.system not in names:
                names.append(counts.system)
        db.session.commit()
    except Exception:  # FileFormatError, StagingError or worse: the upload lands whole or not at all
        db.session.rollback()
        raise
    finish_batch(batch)
    result.systems = list(db.session.scalars(select(System).where(System.name.in_(names)).order_by(System.name)))
    return result
