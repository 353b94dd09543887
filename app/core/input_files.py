"""Which files of a folder someone names are read: regular files inside it, and nothing else.

An importer given a folder (`import-leval`, `import-lveval`, `import-opencompass`, `eval`) reads the
files named like its data. A named pipe so named made the import wait forever, and a symbolic link
pointing outside the folder made it read a file the folder does not hold. Here every entry whose name
matches is looked at without following it (lstat): a regular file is read, anything else (a symbolic
link, a named pipe, a socket, a device, a folder) is refused by name, saying what it is. Reading opens
without following a link and without blocking, and checks the opened file again, so an entry swapped
between the listing and the read is refused too. A file named directly (not inside a folder) may be a
link to a regular file: the person named it. Zip uploads refuse members of the same kinds by their
stored mode (`special_file_kind`).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

ONLY_REGULAR = "only regular files inside the folder are read"
_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISDIR, "a folder"))
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NO_WAIT = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class NotARegularFile(OSError):
    """A path that is not read: `why` says what it is instead of a regular file."""

    def __init__(self, path: Path, why: str):
        self.path, self.why = Path(path), why
        super().__init__(f"{path}: {why}")


def special_file_kind(mode: int) -> str | None:
    """What a file of this st_mode is when it is not a regular file ("a symbolic link", …), else None."""
    return next((kind for test, kind in _KINDS if test(mode)), None)


def files_in(root: Path, suffixes: tuple[str, ...]) -> tuple[list[Path], list[NotARegularFile]]:
    """The regular files under `root` (a folder, searched through its subfolders, or one file) whose names end
    with one of `suffixes`, in a stable order; and the entries so named that are refused, each saying why.

    Raises NotARegularFile when `root` itself is neither a folder nor (after links) a regular file, and
    FileNotFoundError when it does not exist."""
    root = Path(root)
    kind = special_file_kind(os.stat(root).st_mode)
    if kind is None:
        return [root], []
    if kind != "a folder":
        raise NotARegularFile(root, f"is {kind}, not a file or folder")
    found, refused = [], []
    for path in sorted({p for suffix in suffixes for p in root.rglob(f"*{suffix}")}):
        kind = special_file_kind(os.lstat(path).st_mode)
        if kind is None:
            found.append(path)
        elif kind != "a folder":  # a folder named like a file is searched as any other
            refused.append(NotARegularFile(path, f"is {kind}: {ONLY_REGULAR}"))
    return found, refused


def open_regular_file(path: Path, *, follow: bool = False) -> BinaryIO:
    """A regular file opened for reading, without waiting on a named pipe and (unless `follow`: a file named
    directly) without following a symbolic link; NotARegularFile for anything else."""
    flags = os.O_RDONLY | _NO_WAIT | _BINARY | (0 if follow else _NO_FOLLOW)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        if not follow and os.path.islink(path):  # O_NOFOLLOW refuses a link (ELOOP)
            raise NotARegularFile(path, f"is a symbolic link: {ONLY_REGULAR}") from None
        raise
    kind = special_file_kind(os.fstat(descriptor).st_mode)  # what was opened, not what was listed
    if kind is not None:
        os.close(descriptor)
        raise NotARegularFile(path, f"is {kind}, not a file" if follow else f"is {kind}: {ONLY_REGULAR}")
    return os.fdopen(descriptor, "rb")


def read_regular_file(path: Path, *, follow: bool = False) -> bytes:
    """The bytes of a regular file (see open_regular_file)."""
    with open_regular_file(path, follow=follow) as stream:
        return stream.read()
