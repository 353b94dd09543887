"""Which files of a named folder are read: regular files inside it; links, named pipes, sockets and devices are
refused by name, saying what they are, and reading never follows a link nor waits on a pipe."""
from __future__ import annotations

import socket
import stat
import time

import pytest

from app.core.input_files import (
    ONLY_REGULAR,
    NotARegularFile,
    files_in,
    read_regular_file,
    special_file_kind,
)
from tests.support.special_files import link_outside, named_pipe, needs_fifos

pytestmark = pytest.mark.database_free


@needs_fifos
def test_only_regular_files_inside_the_folder_are_listed_and_the_rest_is_refused_by_name(tmp_path):
    folder = tmp_path / "数据"
    (folder / "子目录").mkdir(parents=True)
    (folder / "甲.jsonl").write_bytes(b"{}\n")
    (folder / "子目录" / "乙.jsonl").write_bytes(b"{}\n")
    (folder / "notes.txt").write_bytes(b"not listed")
    (folder / "looks-like.jsonl").mkdir()  # a folder named like a file is searched, not refused
    (folder / "looks-like.jsonl" / "丙.jsonl").write_bytes(b"{}\n")
    link_outside(folder / "outside.jsonl", tmp_path / "elsewhere" / "secret.jsonl", b'{"secret": 1}\n')
    (folder / "inside.jsonl").symlink_to(folder / "甲.jsonl")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(folder / "sock.jsonl"))
        with named_pipe(folder / "pipe.jsonl"):
            started = time.monotonic()
            found, refused = files_in(folder, (".jsonl",))
            assert time.monotonic() - started < 2
    assert [p.relative_to(folder).as_posix() for p in found] == ["looks-like.jsonl/丙.jsonl", "子目录/乙.jsonl", "甲.jsonl"]
    assert {e.path.name: e.why for e in refused} == {
        "inside.jsonl": f"is a symbolic link: {ONLY_REGULAR}", "outside.jsonl": f"is a symbolic link: {ONLY_REGULAR}",
        "pipe.jsonl": f"is a named pipe (FIFO): {ONLY_REGULAR}", "sock.jsonl": f"is a socket: {ONLY_REGULAR}"}


@needs_fifos
def test_reading_never_waits_on_a_pipe_nor_follows_a_link(tmp_path):
    link = link_outside(tmp_path / "in" / "x.json", tmp_path / "out" / "x.json", b"outside")
    with pytest.raises(NotARegularFile, match="is a symbolic link"):
        read_regular_file(link)
    assert read_regular_file(link, follow=True) == b"outside"  # a file named directly may be a link
    with named_pipe(tmp_path / "pipe.json") as pipe:
        started = time.monotonic()
        for follow in (False, True):
            with pytest.raises(NotARegularFile, match=r"is a named pipe \(FIFO\)"):
                read_regular_file(pipe, follow=follow)
        assert time.monotonic() - started < 2
    with pytest.raises(NotARegularFile, match="is a folder"):
        read_regular_file(tmp_path / "in")


@needs_fifos
def test_a_named_root_is_a_folder_or_a_regular_file(tmp_path):
    file = tmp_path / "一.jsonl"
    file.write_bytes(b"{}\n")
    assert files_in(file, (".jsonl",)) == ([file], [])
    link = tmp_path / "link.jsonl"
    link.symlink_to(file)
    assert files_in(link, (".jsonl",)) == ([link], [])  # named directly: the person chose it
    with named_pipe(tmp_path / "pipe.jsonl") as pipe, pytest.raises(NotARegularFile, match="not a file or folder"):
        files_in(pipe, (".jsonl",))
    with pytest.raises(FileNotFoundError):
        files_in(tmp_path / "absent", (".jsonl",))


@pytest.mark.parametrize("mode, kind", [
    (stat.S_IFREG | 0o644, None), (0, None), (stat.S_IFDIR | 0o755, "a folder"), (stat.S_IFLNK | 0o777, "a symbolic link"),
    (stat.S_IFIFO | 0o644, "a named pipe (FIFO)"), (stat.S_IFSOCK | 0o755, "a socket"), (stat.S_IFCHR | 0o600, "a device"),
    (stat.S_IFBLK | 0o600, "a device"),
])
def test_what_a_mode_says_a_file_is(mode, kind):
    assert special_file_kind(mode) == kind
