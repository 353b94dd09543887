"""Turn uploaded files into named `.jsonl` payloads on disk: plain files as they are, zips read defensively.

A zip is refused whole when any member has an absolute or `..` path, is a symlink (or a named pipe, a
socket or a device: only regular files are read, as from folders: core/input_files.py) or is
encrypted, or when its members or their uncompressed bytes exceed the configured caps. Sizes are
counted while reading, so a forged header cannot hide a zip bomb. Every payload is
copied chunk by chunk into a spool file (hashed on the way), so no upload or member is ever
held in memory whole.
"""
from __future__ import annotations

import hashlib
import lzma
import re
import secrets
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from app.core.input_files import special_file_kind
from app.core.opencompass import is_opencompass_file

ACCEPTED_SUFFIXES = (".jsonl", ".zip")
READ_CHUNK = 1024 * 1024
_DRIVE_RE = re.compile(r"^[A-Za-z]:")
# What zipfile and its decompressors raise on a damaged or truncated archive (bad headers, a
# corrupt stream, a failed CRC, a name that is not UTF-8, an unknown version): all mean "refuse it".
DAMAGED_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, lzma.LZMAError, EOFError, OSError,
                      ValueError, NotImplementedError)
# Metadata that macOS and Windows add to archives; never prediction files.
_JUNK_NAMES = (".DS_Store", "Thumbs.db", "desktop.ini")


class UploadRejected(Exception):
    """An uploaded file refused as a whole; the message says why."""


@dataclass(frozen=True)
class UploadedMember:
    name: str  # a display name such as "turbo-16k/quality.pred.jsonl"; never used as a filesystem path
    path: Path  # the spool file holding its bytes
    sha256: str
    size: int


@dataclass
class UnpackedUpload:
    members: list[UploadedMember] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ZipLimits:
    max_bytes: int
    max_members: int


def clean_upload_name(filename: str) -> str:
    """Return the uploaded file's own name, without any folder a browser may have sent."""
    return PurePosixPath((filename or "").replace("\\", "/")).name.strip()


def spool(stream: BinaryIO, folder: Path, *, budget: int | None = None, too_big: str = "") -> tuple[Path, str, int]:
    """Copy a stream chunk by chunk into a new file in folder; return (path, sha256, size).

    Raise UploadRejected(too_big) as soon as more than `budget` bytes arrive (the file is removed).
    """
    path = folder / f".{secrets.token_hex(8)}.part"
    digest, size = hashlib.sha256(), 0
    try:
        with path.open("wb") as out:
            while chunk := stream.read(READ_CHUNK):
                size += len(chunk)
                if budget is not None and size > budget:
                    raise UploadRejected(too_big)
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path, digest.hexdigest(), size


def unpack_upload(filename: str, stream: BinaryIO, limits: ZipLimits, folder: Path) -> UnpackedUpload:
    """Spool the `.jsonl` payloads of one uploaded file into folder; raise UploadRejected for anything unsafe."""
    name = clean_upload_name(filename)
    lowered = name.lower()
    if not name or not lowered.endswith(ACCEPTED_SUFFIXES):
        raise UploadRejected(f"{name or 'unnamed file'}: only .jsonl files (predictions, L-Eval task or reference "
                             "files) and .zip archives of them are accepted")
    if lowered.endswith(".jsonl"):
        path, sha256, size = spool(stream, folder)
        return UnpackedUpload(members=[UploadedMember(name, path, sha256, size)])
    return read_zip(name, stream, limits, folder)


def read_zip(name: str, stream: BinaryIO, limits: ZipLimits, folder: Path) -> UnpackedUpload:
    """Spool the `.jsonl` members of a zip (a seekable stream) after checking every member's path and type."""
    try:
        archive = zipfile.ZipFile(stream)
    except DAMAGED_ZIP_ERRORS:
        raise UploadRejected(f"{name}: not a valid zip archive") from None
    result = UnpackedUpload()
    try:
        with archive:
            wanted = _select_members(name, archive.infolist(), result, limits)
            remaining = limits.max_bytes
            for info in wanted:
                member = _read_member(name, archive, info, remaining, limits.max_bytes, folder)
                remaining -= member.size
                result.members.append(member)
    except BaseException:
        discard_members(result)
        raise
    if not result.members:
        raise UploadRejected(f"{name}: the archive holds no .jsonl files (nor OpenCompass LEval_*.json or LVEval_*.json predictions)")
    return result


def discard_members(unpacked: UnpackedUpload) -> None:
    """Remove the spool files of an unpacked upload."""
    for member in unpacked.members:
        member.path.unlink(missing_ok=True)


def _select_members(name: str, infos: list[zipfile.ZipInfo], result: UnpackedUpload, limits: ZipLimits) -> list[zipfile.ZipInfo]:
    wanted = []
    for info in infos:
        path = _member_path(info)
        _check_member(name, info, path)
        if info.is_dir():
            continue
        parts = PurePosixPath(path).parts
        if parts[0] == "__MACOSX" or parts[-1].startswith("._") or parts[-1] in _JUNK_NAMES:
            continue
        # OpenCompass writes `predictions/<model>/<dataset>.json`: the files of every benchmark it runs are read too.
        if not path.lower().endswith(".jsonl") and not is_opencompass_file(path):
            result.ignored.append(path)
            continue
        wanted.append(info)
    if len(wanted) > limits.max_members:
        raise UploadRejected(f"{name}: {len(wanted)} .jsonl files; at most {limits.max_members} are accepted in one archive")
    return wanted


def _member_path(info: zipfile.ZipInfo) -> str:
    return info.filename.replace("\\", "/")


def _check_member(name: str, info: zipfile.ZipInfo, path: str) -> None:
    parts = [part for part in path.split("/") if part]
    if path.startswith("/") or _DRIVE_RE.match(path) or ".." in parts or not parts:
        raise UploadRejected(f"{name}: member {path!r} has an unsafe path (absolute or '..'); the archive was not read")
    kind = special_file_kind(info.external_attr >> 16)  # the Unix mode a zip may record (0: none)
    if kind is not None and kind != "a folder":
        raise UploadRejected(f"{name}: member {path!r} is {kind}; the archive was not read")
    if info.flag_bits & 0x1:
        raise UploadRejected(f"{name}: member {path!r} is encrypted; the archive was not read")


def _read_member(name: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int, limit: int,
                 folder: Path) -> UploadedMember:
    """Spool one member, stopping as soon as the archive's uncompressed budget is spent."""
    too_big = f"{name}: uncompressed contents exceed the limit of {_megabytes(limit)} (LEVAL_MAX_UNZIPPED_MB)"
    if info.file_size > budget:
        raise UploadRejected(too_big)
    try:
        with archive.open(info) as stream:
            path, sha256, size = spool(stream, folder, budget=budget, too_big=too_big)
    except DAMAGED_ZIP_ERRORS as exc:
        if isinstance(exc, OSError) and exc.errno is not None:
            raise  # the disk, not the archive: a storage failure
        raise UploadRejected(f"{name}: member {_member_path(info)!r} cannot be read ({exc})") from None
    return UploadedMember(_member_path(info), path, sha256, size)


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB" if size >= 1024 * 1024 else f"{size} bytes"
