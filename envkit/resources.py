"""Where envkit's bundled data lives: ``templates/`` and ``skills/``.

In a wheel they are packaged as ``envkit/_data/{templates,skills}`` (pyproject's
``force-include``); in a source checkout or editable install they are the top-level folders
next to ``envkit/``.
"""

from __future__ import annotations

from pathlib import Path

from envkit.errors import InternalError

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The bundled ``templates`` or ``skills`` directory.

    Raises:
        InternalError: the installation lacks it (a broken wheel).
    """
    for candidate in (_PKG / "_data" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise InternalError(
        f"envkit's bundled `{name}/` directory is missing from {_PKG}; reinstall rl-envkit."
    )


def templates_dir() -> Path:
    return data_dir("templates")


def skills_dir() -> Path:
    return data_dir("skills")
