"""Writing files so that a reader (or a crash) never sees half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *, mode: int | None = None,
                 fsync: bool = True, parents: bool = True) -> None:
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
