"""Where the ``uv`` binary is: a leaf module, so commands that only shell out to uv (``envkit
init``'s lock, the importers) do not import the manifest model."""

from __future__ import annotations

import functools
import shutil
import threading

_UV_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1)
def _find_uv() -> str | None:
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def uv_binary() -> str | None:
    """Path of the ``uv`` binary: the one shipped by the ``uv`` package, else PATH.

    Thread-safe: ``uv.find_uv_bin`` initialises ``sysconfig``, which races when first called
    from several threads at once (seen in the template tests).
    """
    with _UV_LOCK:
        return _find_uv()
