"""Writing files so that a reader (or a crash) never sees half of one."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def write_atomic(
    path: str | os.PathLike[str],
    data: bytes | str,
    *,
    mode: int | None = None,
    fsync: bool = True,
    parents: bool = True,
) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and
    ``os.replace``: the file is either the old one or the whole new one.

    Args:
        path: destination.
        data: bytes, or text written as UTF-8.
        mode: permission bits for the new file (``None``: the umask default of mkstemp, 0o600).
        fsync: flush the data to disk before the rename.
        parents: create missing parent directories (else a missing one is an error).

    Raises:
        OSError: the directory cannot be created or written; the temporary file is removed.
    """
    path = Path(path)
    if parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o644 if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# -- bounded reading -------------------------------------------------------
# Static validation and push read files of projects they do not trust: a FIFO named `notes.txt`
# blocks `read()` forever, a symlink to /dev/zero never ends, a 10 GB sparse file is "small" on
# disk. Every static reader goes through :func:`read_bounded`, which opens only regular files
# inside the project, never blocks on open, and reads at most ``limit`` bytes.

TEXT_LIMIT = 1024 * 1024  # bytes; manifests, cards, Dockerfiles, pyproject.toml, Python modules


class UnsafeFileError(OSError):
    """The path is not a regular file inside the project (a FIFO, device, socket, directory,
    or a symbolic link whose target leaves the project). ``reason`` says which."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class FileTooLargeError(OSError):
    """The file holds more than ``limit`` bytes (``size`` is what ``fstat`` reported)."""

    def __init__(self, path: str, size: int, limit: int):
        super().__init__(f"{path}: {size} bytes, more than the {limit}-byte limit")
        self.path = path
        self.size = size
        self.limit = limit


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_bounded(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    limit: int = TEXT_LIMIT,
) -> bytes:
    """The bytes of a regular file, never more than ``limit`` of them.

    The file is opened with ``O_NONBLOCK`` (opening a FIFO never waits for a writer) and
    checked with ``fstat`` on the open descriptor (no race between check and read): anything but
    a regular file is refused before one byte is read. With ``root``, a path whose real location
    (symbolic links resolved) is outside ``root`` is refused too.

    Args:
        path: the file.
        root: the project directory the file must stay inside (``None``: no such check).
        limit: bytes; a larger file raises :class:`FileTooLargeError` without being read.

    Returns:
        The file's content (``len <= limit``).

    Raises:
        FileNotFoundError: it does not exist.
        UnsafeFileError: not a regular file, or its target leaves ``root``.
        FileTooLargeError: more than ``limit`` bytes.
        OSError: any other read error (permissions, I/O).
    """
    shown = os.fspath(path)
    if root is not None:
        real = os.path.realpath(path)
        base = os.path.realpath(root)
        if os.path.commonpath([real, base]) != base:
            raise UnsafeFileError(shown, "a symbolic link that leads outside the project")
    flags = (
        os.O_RDONLY
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_NOCTTY", 0)
        | getattr(os, "O_BINARY", 0)
    )
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        # a Unix socket cannot be opened (ENXIO): say what it is, as probe() does
        try:
            mode = os.stat(path).st_mode
        except OSError:
            raise exc from None
        if stat.S_ISSOCK(mode):
            raise UnsafeFileError(shown, _kind(mode)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFileError(shown, _kind(st.st_mode))
        if st.st_size > limit:
            raise FileTooLargeError(shown, st.st_size, limit)
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:  # grew while we read it
            raise FileTooLargeError(shown, got, limit)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text_bounded(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    limit: int = TEXT_LIMIT,
) -> str:
    """:func:`read_bounded`, decoded as UTF-8 (a leading BOM is dropped).

    Raises:
        UnicodeDecodeError: the bytes are not UTF-8; and what :func:`read_bounded` raises.
    """
    return read_bounded(path, root=root, limit=limit).decode("utf-8-sig")


def is_regular_inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a regular file whose real location is inside ``root`` (never
    opens it: safe on FIFOs and devices)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    real, base = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([real, base]) == base


def probe(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str], limit: int = TEXT_LIMIT
) -> OSError | None:
    """Why :func:`read_bounded` would refuse ``path``, without opening it: an
    :class:`UnsafeFileError`, a :class:`FileTooLargeError`, or ``None`` (readable, or missing).
    """
    shown = os.fspath(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            return UnsafeFileError(shown, "a symbolic link to a missing file")
        return None
    except OSError as exc:
        return exc
    real, base = os.path.realpath(path), os.path.realpath(root)
    if os.path.commonpath([real, base]) != base:
        return UnsafeFileError(shown, "a symbolic link that leads outside the project")
    if not stat.S_ISREG(st.st_mode):
        return UnsafeFileError(shown, _kind(st.st_mode))
    if st.st_size > limit:
        return FileTooLargeError(shown, st.st_size, limit)
    return None


def cache_dir(name: str) -> Path | None:
    """envkit's writable cache directory ``name``: ``$XDG_CACHE_HOME/envkit/NAME`` (default
    ``~/.cache/envkit/NAME``), created when missing; ``None`` when it cannot be created or
    written (a read-only home), so callers run without the cache."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    path = base / "envkit" / name
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK | os.X_OK) else None
