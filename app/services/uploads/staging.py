"""The staging area: previewed files wait here, named by sha256, until the researcher confirms.

Layout under UPLOAD_FOLDER: `staging/<sha256>.jsonl` (payloads), `staging/<batch>.json`
(the preview manifest, bound to the user who uploaded) and `<sha256>.jsonl` (confirmed files).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.services.folders import instance_folder, staging_folder, upload_folder
from app.services.uploads.archive import READ_CHUNK
from app.services.uploads.file_preview import FilePreview

BATCH_ID_RE = re.compile(r"^[0-9a-f]{32}$")
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
STALE_SECONDS = 24 * 3600


class StagingError(Exception):
    """A staged batch or file that is missing, foreign or altered."""


@dataclass
class Batch:
    id: str
    user_id: int
    created: float
    system_override: str = ""
    files: list[FilePreview] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)

    @property
    def valid_files(self) -> list[FilePreview]:
        return [f for f in self.files if f.ok]

    @property
    def invalid_files(self) -> list[FilePreview]:
        return [f for f in self.files if not f.ok]

    def as_dict(self) -> dict:
        return {
            "id": self.id, "user_id": self.user_id, "created": self.created, "system_override": self.system_override,
            "files": [f.as_dict() for f in self.files], "ignored": self.ignored, "rejected": self.rejected,
        }


def upload_root() -> Path:
    return upload_folder()


def staging_root() -> Path:
    folder = staging_folder()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def stage_batch(batch: Batch, spooled: dict[str, Path]) -> Batch:
    """Keep the valid files' spool files (as `<sha256>.jsonl`), drop the others, write the manifest."""
    root = staging_root()
    valid = {preview.sha256 for preview in batch.valid_files}
    placed: list[Path] = []  # payloads this batch staged; one another batch staged before stays
    try:
        for sha256, path in spooled.items():
            target = root / f"{sha256}.jsonl"
            if sha256 not in valid or target.exists():
                path.unlink(missing_ok=True)
                continue
            os.replace(path, target)
            placed.append(target)
        _write_atomic(root / f"{batch.id}.json", json.dumps(batch.as_dict()).encode("utf-8"))
    except BaseException:  # say, the disk filled up: stage nothing
        for path in [*placed, *spooled.values()]:
            path.unlink(missing_ok=True)
        raise
    return batch


def new_batch(user_id: int, system_override: str = "") -> Batch:
    return Batch(id=secrets.token_hex(16), user_id=user_id, created=time.time(), system_override=system_override)


def load_batch(batch_id: str, user_id: int) -> Batch:
    """Return the user's staged batch; raise StagingError if it is unknown or someone else's."""
    if not BATCH_ID_RE.match(batch_id or ""):
        raise StagingError("unknown upload")
    path = staging_root() / f"{batch_id}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StagingError("this upload was already confirmed or discarded, or it expired") from None
    if data.get("user_id") != user_id:
        raise StagingError("unknown upload")
    files = [FilePreview.from_dict(item) for item in data.pop("files", [])]
    return Batch(files=files, **data)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(READ_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def read_staged(preview: FilePreview) -> Path:
    """Return a staged payload's path, checking it still has the sha256 it was previewed with."""
    if not SHA256_RE.match(preview.sha256):
        raise StagingError(f"{preview.name}: bad file fingerprint")
    path = staging_root() / f"{preview.sha256}.jsonl"
    if not path.exists():
        stored = upload_root() / f"{preview.sha256}.jsonl"
        if not stored.exists():
            raise StagingError(f"{preview.name}: the staged copy is gone; upload the file again")
        path = stored
    if file_sha256(path) != preview.sha256:
        raise StagingError(f"{preview.name}: the staged copy was altered; upload the file again")
    return path


def stored_relative_path(sha256: str) -> str:
    """The confirmed file's path (relative to the instance folder when inside it), as recorded on PredictionFile."""
    target = upload_root().resolve() / f"{sha256}.jsonl"
    try:
        return target.relative_to(instance_folder().resolve()).as_posix()
    except ValueError:
        return str(target)


def keep_file(sha256: str, source: Path) -> str:
    """Copy a confirmed payload out of staging into the upload folder; return its recorded path."""
    target = upload_root() / f"{sha256}.jsonl"
    if not target.exists() and source != target:
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    return stored_relative_path(sha256)


def discard_batch(batch: Batch) -> None:
    """Forget a batch; payloads shared with other batches stay until they go stale."""
    (staging_root() / f"{batch.id}.json").unlink(missing_ok=True)


def finish_batch(batch: Batch) -> None:
    """Remove a confirmed batch's manifest and staged payloads."""
    discard_batch(batch)
    for preview in batch.valid_files:
        (staging_root() / f"{preview.sha256}.jsonl").unlink(missing_ok=True)


def sweep_stale(max_age: float = STALE_SECONDS) -> int:
    """Delete staged files older than `max_age` seconds; return how many went."""
    cutoff = time.time() - max_age
    removed = 0
    for path in staging_root().iterdir():
        try:
            if path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    return removed
