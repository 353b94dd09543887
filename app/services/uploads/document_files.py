"""L-Eval task files and the human-eval reference file in an upload: preview them (every bad line, what
would be added) and store them, first, in the upload's transaction, with the importer `import-leval` uses."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.core.metrics.files import FileFormatError, Row, parse_jsonl
from app.services.importers.documents import (
    DocumentCounts,
    collection_for,
    parse_document_file,
    preview_documents,
    store_documents,
)
from app.services.uploads.file_preview import DOCUMENTS_KIND, FilePreview

DOCUMENT_FORMATS = ("references", "task")


def preview_document_file(preview: FilePreview, rows: list[Row], fmt: str) -> None:
    """Fill a preview for a task or reference file: each bad line by line and field, then what it would add."""
    preview.kind, preview.format = DOCUMENTS_KIND, fmt
    preview.system = ""
    for row in rows:  # one line at a time, so every bad line is named, not just the first
        try:
            parse_document_file([row], preview.name, fmt)
        except FileFormatError as exc:
            preview.add_error(exc.message, line=exc.line, field_name=exc.field)
    if not preview.ok:
        return
    parsed = parse_document_file(rows, preview.name, fmt)
    preview.task = "" if fmt == "references" else parsed[0].task
    counts = preview_documents(parsed, collection=collection_for(fmt))
    preview.new_documents = counts.documents_new
    preview.new, preview.unchanged = counts.questions_new, counts.questions_stored
    preview.matched, preview.unmatched = None, 0


def import_document_previews(previews: list[FilePreview], read: Callable[[FilePreview], Path]) -> list[DocumentCounts]:
    """Store each previewed document file in the caller's transaction (raise on any problem: nothing is kept)."""
    results = []
    for preview in previews:
        with read(preview).open("rb") as stream:
            rows = parse_jsonl(stream, preview.name)
        parsed = parse_document_file(rows, preview.name, preview.format)
        results.append(store_documents(parsed, collection=collection_for(preview.format), name=preview.name))
    return results
