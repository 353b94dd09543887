"""Turn uploaded files into named `.jsonl` payloads: plain files as they are, zips read defensively.

A zip is refused whole when any member has an absolute or `..` path, is a symlink or is
encrypted, or when its members or their uncompressed bytes exceed the configured caps.
Sizes are counted while reading, so a forged header cannot hide a zip bomb.
"""
from __future__ import annotations

import io
import lzma
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import PurePosixPath

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
    data: bytes


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


def unpack_upload(filename: str, data: bytes, limits: ZipLimits) -> UnpackedUpload:
    """Return the `.jsonl` payloads of one uploaded file; raise UploadRejected for anything unsafe."""
    name = clean_upload_name(filename)
    lowered = name.lower()
    if not name or not lowered.endswith(ACCEPTED_SUFFIXES):
        raise UploadRejected(f"{name or 'unnamed file'}: only .jsonl (or .pred.jsonl) files and .zip archives are accepted")
    if lowered.endswith(".jsonl"):
        return UnpackedUpload(members=[UploadedMember(name, data)])
    return read_zip(name, data, limits)


def read_zip(name: str, data: bytes, limits: ZipLimits) -> UnpackedUpload:
    """Read the `.jsonl` members of a zip after checking every member's path and type."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except DAMAGED_ZIP_ERRORS:
        raise UploadRejected(f"{name}: not a valid zip archive") from None
    result = UnpackedUpload()
    with archive:
        wanted = _select_members(name, archive.infolist(), result, limits)
        remaining = limits.max_bytes
        for info in wanted:
            payload = _read_member(name, archive, info, remaining, limits.max_bytes)
            remaining -= len(payload)
            result.members.append(UploadedMember(_member_path(info), payload))
    if not result.members:
        raise UploadRejected(f"{name}: the archive holds no .jsonl files")
    return result


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
        if not path.lower().endswith(".jsonl"):
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
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise UploadRejected(f"{name}: member {path!r} is a symbolic link; the archive was not read")
    if info.flag_bits & 0x1:
        raise UploadRejected(f"{name}: member {path!r} is encrypted; the archive was not read")


def _read_member(name: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int, limit: int) -> bytes:
    """Read one member, stopping as soon as the archive's uncompressed budget is spent."""
    too_big = f"{name}: uncompressed contents exceed the limit of {_megabytes(limit)} (LEVAL_MAX_UNZIPPED_MB)"
    if info.file_size > budget:
        raise UploadRejected(too_big)
    chunks, size = [], 0
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(READ_CHUNK):
                size += len(chunk)
                if size > budget:
                    raise UploadRejected(too_big)
                chunks.append(chunk)
    except DAMAGED_ZIP_ERRORS as exc:
        raise UploadRejected(f"{name}: member {_member_path(info)!r} cannot be read ({exc})") from None
    return b"".join(chunks)


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB" if size >= 1024 * 1024 else f"{size} bytes"
