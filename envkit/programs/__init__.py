"""Programs envkit runs in another interpreter (an environment's own venv, a container).

Each module here is a complete program that imports only the standard library and what the
environment itself has installed: never ``envkit``, which that interpreter does not have.
envkit runs them by path (:func:`path`) with ``python -I FILE ARGS`` or, where a program must
see the environment's working directory first on ``sys.path``, ``python -c <its text>``. They are
linted, formatted and tested like the rest of envkit.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).parent


def path(name: str) -> Path:
    """The file of the program ``name`` (e.g. ``"schema_probe"``).

    Raises:
        FileNotFoundError: no such program ships with envkit.
    """
    file = _HERE / f"{name}.py"
    if not file.is_file():
        raise FileNotFoundError(file)
    return file


def source(name: str) -> str:
    """The text of the program ``name``, for ``python -c``."""
    return path(name).read_text(encoding="utf-8")
