"""An upload without a preview step (the API): the upload page's rules, then all files or none, then metrics.

The page shows a preview and imports the valid files; a script cannot look at a preview, so here any
problem in any file (or a rejected archive) imports nothing and reports every error by file, line and
field. So does what the page's preview would show a person before they confirm: a row that matches no
stored question (unless `skip_unmatched`, as the page skips them), and an answer that differs from the
stored one (409 unless `replace`, the page's replace box). A `system` names the system of every file of the
upload; an upload whose files name several systems is refused rather than merged into one. Uploading the
same content again changes nothing: every row is already stored (unchanged), and the metrics job of a
system already scored on the same inputs is the existing one.
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
from app.services.uploads.file_preview import DOCUMENTS_KIND


@dataclass
class UploadRefused(Exception):
    """Nothing was imported; `errors` are {file, line, field, message}; `status` 409 for answers that differ
    from the stored ones, 422 for anything else."""

    errors: list[dict] = field(default_factory=list)
    status: int = 422

    def __str__(self) -> str:
        return f"nothing was imported: {len(self.errors)} problem(s)"


@dataclass
class DirectUpload:
    batch_id: str
    result: ConfirmResult
    job_ids: list[int]


def _error(message: str, *, file: str | None = None, line: int | None = None, field_name: str | None = None) -> dict:
    return {"file": file, "line": line, "field": field_name, "message": message}


def _system_errors(batch, system: str) -> list[dict]:
    """An upload that `system` names must hold one system's predictions, every file renamed to it."""
    predictions = [preview for preview in batch.files if preview.kind != DOCUMENTS_KIND]
    named = sorted({preview.named_system for preview in predictions if preview.named_system})
    if len(named) > 1:
        return [_error(f"the upload holds the predictions of {len(named)} systems ({', '.join(named[:5])}): "
                       "`system` names one system; leave it out to keep the names the files give, or upload one "
                       "system per request", field_name="system")]
    return [_error(f"this file's system is {preview.system!r} (its folder names it) and cannot be renamed to "
                   f"{system!r}: leave `system` out", file=preview.name, field_name="system")
            for preview in predictions if preview.ok and preview.system != system]


def _unmatched_errors(preview) -> list[dict]:
    if not preview.unmatched:
        return []
    message = ("matches no stored question: upload L-Eval's task or reference file first, or send "
               "skip_unmatched=true to import the other rows")
    lines = preview.unmatched_lines or [None]
    errors = [_error(message, file=preview.name, line=line, field_name="query") for line in lines]
    if preview.unmatched > len(preview.unmatched_lines) and preview.unmatched_lines:
        errors.append(_error(f"and {preview.unmatched - len(preview.unmatched_lines)} more unmatched row(s)",
                             file=preview.name, field_name="query"))
    return errors


def upload_all_or_nothing(uploads: list[tuple[str, BinaryIO]], *, user_id: int, system_override: str = "",
                          replace: bool = False, skip_unmatched: bool = False) -> DirectUpload:
    """Check every file as the upload page does; import all of them in one transaction, or none; queue metrics."""
    system_override = system_override.strip()
    batch = preview_upload(uploads, user_id=user_id, system_override=system_override,
                           system_everywhere=bool(system_override))
    errors = [_error(problem) for problem in batch.rejected]
    if system_override:
        errors += _system_errors(batch, batch.system_override or system_override)
    conflicts = []
    for preview in batch.files:
        errors += [{"file": preview.name, **error} for error in preview.errors]
        if preview.more_errors:
            errors.append(_error(f"and {preview.more_errors} more error(s)", file=preview.name))
        if preview.ok and not skip_unmatched:
            errors += _unmatched_errors(preview)
        if preview.ok and preview.conflicts and not replace:
            conflicts.append(_error(f"{preview.conflicts} answer(s) differ from the stored answers of "
                                    f"{preview.system}: send replace=true to replace them", file=preview.name,
                                    field_name="replace"))
    if not batch.files and not errors:
        errors.append(_error("no prediction file in the upload" + (
            f" (ignored: {', '.join(batch.ignored[:5])})" if batch.ignored else ""), field_name="file"))
    if errors or conflicts:
        discard_batch(batch)
        raise UploadRefused(errors or conflicts, status=422 if errors else 409)
    try:
        result = confirm_batch(batch, user_id=user_id, replace=replace)
    except FileFormatError as exc:
        discard_batch(batch)
        raise UploadRefused([exc.as_dict()]) from None
    jobs, already = submit_for_systems(result.systems, user_id=user_id)
    return DirectUpload(batch.id, result, [job.id for job in jobs] + [refused.job.id for refused in already])
