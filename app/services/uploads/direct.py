"""An upload without a preview step (the API): the upload page's rules, then all files or none, then metrics.

The page shows a preview and imports the valid files; a script cannot look at a preview, so here any
problem in any file (or a rejected archive) imports nothing and reports every error by file, line and
field. Uploading the same content again changes nothing: every row is already stored (unchanged), and
the metrics job of a system already scored on the same inputs is the existing one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import BinaryIO

from app.services.metrics import submit_for_systems
from app.services.uploads import (
    ConfirmResult,
    FileFormatError,
    confirm_batch,
    discard_batch,
    preview_upload,
)


@dataclass
class UploadRefused(Exception):
    """Nothing was imported; `errors` are {file, line, field, message}."""

    errors: list[dict] = field(default_factory=list)

    def __str__(self) -> str:
        return f"nothing was imported: {len(self.errors)} problem(s)"


@dataclass
class DirectUpload:
    batch_id: str
    result: ConfirmResult
    job_ids: list[int]


def upload_all_or_nothing(uploads: list[tuple[str, BinaryIO]], *, user_id: int, system_override: str = "",
                          replace: bool = False) -> DirectUpload:
    """Check every file as the upload page does; import all of them in one transaction, or none; queue metrics."""
    batch = preview_upload(uploads, user_id=user_id, system_override=system_override)
    errors = [{"file": None, "line": None, "field": None, "message": problem} for problem in batch.rejected]
    for preview in batch.invalid_files:
        errors += [{"file": preview.name, **error} for error in preview.errors]
        if preview.more_errors:
            errors.append({"file": preview.name, "line": None, "field": None,
                           "message": f"and {preview.more_errors} more error(s)"})
    if not batch.files and not errors:
        errors.append({"file": None, "line": None, "field": "file",
                       "message": "no prediction file in the upload" + (
                           f" (ignored: {', '.join(batch.ignored[:5])})" if batch.ignored else "")})
    if errors:
        discard_batch(batch)
        raise UploadRefused(errors)
    try:
        result = confirm_batch(batch, user_id=user_id, replace=replace)
    except FileFormatError as exc:
        discard_batch(batch)
        raise UploadRefused([exc.as_dict()]) from None
    jobs, already = submit_for_systems(result.systems, user_id=user_id)
    return DirectUpload(batch.id, result, [job.id for job in jobs] + [refused.job.id for refused in already])
