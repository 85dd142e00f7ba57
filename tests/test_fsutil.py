"""envkit.fsutil on real files in tmp_path: atomic writes leave no half file and no temporary,
and the bounded readers refuse FIFOs, devices, sockets, directories, links out of the root and
files over the byte limit before reading them (a FIFO must never block the test)."""

from __future__ import annotations

import errno
import os
import socket
import stat
from pathlib import Path

import pytest

from envkit.fsutil import (
    TEXT_LIMIT,
    FileTooLargeError,
    UnsafeFileError,
    is_regular_inside,
    probe,
    read_bounded,
    read_text_bounded,
    write_atomic,
)

# A FIFO opened without O_NONBLOCK waits forever for a writer: fail fast instead of hanging.
pytestmark = pytest.mark.timeout(20)


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# -- write_atomic ------------------------------------------------------------------------------


def test_write_atomic_writes_text_as_utf8_and_bytes_as_is(tmp_path: Path) -> None:
    write_atomic(tmp_path / "t.txt", "é ✓\n")
    write_atomic(tmp_path / "b.bin", b"\x00\xff")
    assert (tmp_path / "t.txt").read_bytes() == "é ✓\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
    assert _leftovers(tmp_path) == []


def test_write_atomic_replaces_an_existing_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old content that is longer than the new one\n")
    write_atomic(target, "new\n", fsync=False)
    assert target.read_text() == "new\n"
    assert _leftovers(tmp_path) == []


def test_write_atomic_default_mode_is_0644_and_mode_is_applied(tmp_path: Path) -> None:
    # mkstemp creates 0o600; the writer widens it to 0o644 unless told otherwise.
    write_atomic(tmp_path / "a", "x")
    write_atomic(tmp_path / "b", "x", mode=0o600)
    write_atomic(tmp_path / "c", "x", mode=0o755)
    modes = {n: stat.S_IMODE((tmp_path / n).stat().st_mode) for n in "abc"}
    assert modes == {"a": 0o644, "b": 0o600, "c": 0o755}


def test_write_atomic_creates_parents_unless_told_not_to(tmp_path: Path) -> None:
    write_atomic(tmp_path / "x" / "y" / "z.txt", "deep")
    assert (tmp_path / "x" / "y" / "z.txt").read_text() == "deep"
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "missing" / "z.txt", "x", parents=False)
    assert not (tmp_path / "missing").exists()


def test_write_atomic_failure_removes_the_temporary_and_keeps_the_target(tmp_path: Path) -> None:
    target = tmp_path / "a-directory"
    target.mkdir()
    (target / "inside").write_text("kept")
    with pytest.raises(IsADirectoryError):
        write_atomic(target, "x")  # os.replace of a file onto a non-empty directory fails
    assert (target / "inside").read_text() == "kept"
    assert _leftovers(tmp_path) == []


def test_write_atomic_through_a_symlink_replaces_the_link_not_its_target(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("untouched")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_atomic(link, "new")
    assert real.read_text() == "untouched"
    assert not link.is_symlink() and link.read_text() == "new"


# -- read_bounded / read_text_bounded ----------------------------------------------------------


def test_read_bounded_returns_the_bytes_of_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc\x00def")
    assert read_bounded(tmp_path / "f", root=tmp_path) == b"abc\x00def"
    assert read_bounded(str(tmp_path / "f")) == b"abc\x00def"  # str paths and no root


def test_read_bounded_limit_is_inclusive(tmp_path: Path) -> None:
    (tmp_path / "exact").write_bytes(b"x" * 100)
    (tmp_path / "over").write_bytes(b"x" * 101)
    assert len(read_bounded(tmp_path / "exact", limit=100)) == 100
    with pytest.raises(FileTooLargeError) as info:
        read_bounded(tmp_path / "over", limit=100)
    err = info.value
    assert (err.size, err.limit, err.path) == (101, 100, str(tmp_path / "over"))
    assert "101 bytes, more than the 100-byte limit" in str(err)
    assert isinstance(err, OSError)  # callers that catch OSError keep working


def test_read_bounded_default_limit_is_one_mib(tmp_path: Path) -> None:
    assert TEXT_LIMIT == 1024 * 1024
    (tmp_path / "ok").write_bytes(b"a" * TEXT_LIMIT)
    assert len(read_bounded(tmp_path / "ok")) == TEXT_LIMIT
    with (tmp_path / "ok").open("ab") as fh:
        fh.write(b"a")
    with pytest.raises(FileTooLargeError):
        read_bounded(tmp_path / "ok")


def test_read_bounded_refuses_a_sparse_20_gib_file_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "sparse.bin"
    big.touch()
    os.truncate(big, 20 << 30)
    with pytest.raises(FileTooLargeError) as info:
        read_bounded(big, root=tmp_path)
    assert info.value.size == 20 << 30


def test_read_bounded_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "notes.txt")
    with pytest.raises(UnsafeFileError) as info:
        read_bounded(tmp_path / "notes.txt", root=tmp_path)
    assert info.value.reason == "a FIFO (named pipe)"
    assert str(info.value) == f"{tmp_path / 'notes.txt'}: a FIFO (named pipe)"


def test_read_bounded_refuses_a_character_device(tmp_path: Path) -> None:
    with pytest.raises(UnsafeFileError) as info:
        read_bounded("/dev/null")
    assert info.value.reason == "a character device"


def test_read_bounded_refuses_a_directory(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(UnsafeFileError) as info:
        read_bounded(tmp_path / "d", root=tmp_path)
    assert info.value.reason == "a directory"


def test_read_bounded_refuses_a_unix_socket_like_probe_does(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        assert isinstance(probe(path, root=tmp_path), UnsafeFileError)
        with pytest.raises(UnsafeFileError) as info:
            read_bounded(path, root=tmp_path)
        assert info.value.reason == "a socket"


def test_read_bounded_on_a_unix_socket_raises_an_oserror_without_blocking(tmp_path: Path) -> None:
    # Whatever the exact class, a caller that catches OSError (load_yaml, push) is safe.
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(OSError):
            read_bounded(path, root=tmp_path)


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom", "/etc/hostname"])
def test_read_bounded_refuses_a_symlink_leaving_the_root(tmp_path: Path, target: str) -> None:
    link = tmp_path / "README.md"
    link.symlink_to(target)
    with pytest.raises(UnsafeFileError) as info:
        read_bounded(link, root=tmp_path)
    assert info.value.reason == "a symbolic link that leads outside the project"
    assert info.value.path == str(link)


def test_read_bounded_without_root_follows_a_symlink_to_a_device_and_still_refuses(
    tmp_path: Path,
) -> None:
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    with pytest.raises(UnsafeFileError) as info:
        read_bounded(link)  # no root: the fstat check alone stops the endless read
    assert info.value.reason == "a character device"


def test_read_bounded_accepts_a_symlink_that_stays_inside_the_root(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "real.txt").write_text("inside")
    (tmp_path / "alias.txt").symlink_to(Path("sub") / "real.txt")
    assert read_bounded(tmp_path / "alias.txt", root=tmp_path) == b"inside"


def test_read_bounded_root_is_not_a_string_prefix_check(tmp_path: Path) -> None:
    # /tmp/x/proj and /tmp/x/proj-evil share a prefix but not a directory.
    root = tmp_path / "proj"
    evil = tmp_path / "proj-evil"
    root.mkdir()
    evil.mkdir()
    (evil / "secret").write_text("s")
    (root / "link").symlink_to(evil / "secret")
    with pytest.raises(UnsafeFileError):
        read_bounded(root / "link", root=root)
    with pytest.raises(UnsafeFileError):
        read_bounded(root / ".." / "proj-evil" / "secret", root=root)  # no link, still outside


def test_read_bounded_through_a_symlinked_root_is_inside(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "f").write_text("ok")
    (tmp_path / "via").symlink_to(real, target_is_directory=True)
    assert read_bounded(tmp_path / "via" / "f", root=tmp_path / "via") == b"ok"
    assert read_bounded(real / "f", root=tmp_path / "via") == b"ok"


def test_read_bounded_missing_and_dangling_are_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "nope", root=tmp_path)
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "dangling", root=tmp_path)


def test_read_bounded_symlink_loop_is_an_oserror(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(OSError) as info:
        read_bounded(tmp_path / "a", root=tmp_path)
    assert info.value.errno == errno.ELOOP


def test_read_text_bounded_drops_a_bom_and_refuses_non_utf8(tmp_path: Path) -> None:
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfname: x\n")
    assert read_text_bounded(tmp_path / "bom.txt", root=tmp_path) == "name: x\n"
    (tmp_path / "latin1.txt").write_bytes("café".encode("latin-1"))
    with pytest.raises(UnicodeDecodeError):
        read_text_bounded(tmp_path / "latin1.txt", root=tmp_path)


def test_read_text_bounded_applies_the_limit_in_bytes_not_characters(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("é" * 3)  # 6 bytes, 3 characters
    assert read_text_bounded(tmp_path / "f", limit=6) == "ééé"
    with pytest.raises(FileTooLargeError):
        read_text_bounded(tmp_path / "f", limit=5)


# -- is_regular_inside ---------------------------------------------------------------------


def test_is_regular_inside(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "f").write_text("x")
    (root / "d").mkdir()
    os.mkfifo(root / "fifo")
    (root / "out").symlink_to("/etc/hostname")
    (root / "in").symlink_to(root / "f")
    (tmp_path / "outside").write_text("x")
    assert is_regular_inside(root / "f", root)
    assert is_regular_inside(root / "in", root)
    assert not is_regular_inside(root / "d", root)
    assert not is_regular_inside(root / "fifo", root)  # never opened: no block
    assert not is_regular_inside(root / "out", root)
    assert not is_regular_inside(root / "missing", root)
    assert not is_regular_inside(tmp_path / "outside", root)


# -- probe -------------------------------------------------------------------------------------


def test_probe_readable_and_missing_are_none(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    assert probe(tmp_path / "f", root=tmp_path) is None
    assert probe(tmp_path / "missing", root=tmp_path) is None


def test_probe_names_each_refusal(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "big").write_bytes(b"x" * 11)
    reasons = {
        name: getattr(probe(tmp_path / name, root=tmp_path, limit=10), "reason", None)
        for name in ("fifo", "dir", "dangling", "zero")
    }
    assert reasons == {
        "fifo": "a FIFO (named pipe)",
        "dir": "a directory",
        "dangling": "a symbolic link to a missing file",
        "zero": "a symbolic link that leads outside the project",
    }
    big = probe(tmp_path / "big", root=tmp_path, limit=10)
    assert isinstance(big, FileTooLargeError) and (big.size, big.limit) == (11, 10)


def test_probe_agrees_with_read_bounded(tmp_path: Path) -> None:
    (tmp_path / "ok").write_text("x")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "out").symlink_to("/etc/hostname")
    (tmp_path / "big").write_bytes(b"x" * 11)
    for name in ("ok", "fifo", "out", "big"):
        path = tmp_path / name
        predicted = probe(path, root=tmp_path, limit=10)
        try:
            read_bounded(path, root=tmp_path, limit=10)
        except OSError as exc:
            assert type(exc) is type(predicted), name
            assert str(exc) == str(predicted), name
        else:
            assert predicted is None, name


def test_probe_returns_other_stat_errors_instead_of_raising(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "file").write_text("x")
    loop = probe(tmp_path / "a", root=tmp_path)
    assert isinstance(loop, OSError) and loop.errno == errno.ELOOP
    under_file = probe(tmp_path / "file" / "child", root=tmp_path)
    assert isinstance(under_file, NotADirectoryError)
