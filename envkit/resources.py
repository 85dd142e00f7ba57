"""Where envkit's bundled data lives: ``templates/`` and ``skills/``.

In a wheel they are packaged as ``envkit/_data/{templates,skills}`` (pyproject's
``force-include``); in a source checkout or editable install they are the top-level folders
next to ``envkit/``.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlparse

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


def install_origin() -> str:
    """Where the imported envkit comes from, for ``envkit --version``.

    Returns:
        ``"editable, <checkout>"`` for an editable install of a checkout (PEP 610's
        ``direct_url.json`` of ``rl-envkit`` says ``editable`` and points at the folder that
        holds the imported ``envkit/``); ``"checkout, <checkout>"`` for a checkout imported
        without an install of it (``PYTHONPATH``, or a different editable install); else the
        installed package's folder (``.../site-packages/envkit``). Paths are absolute. Never
        raises: unreadable metadata counts as none.
    """
    # Imported here: importlib.metadata costs ~15 ms that every command importing this module
    # (init, the templates) would pay for `--version` alone.
    from importlib import metadata

    root = _PKG.parent
    try:
        direct = json.loads(metadata.distribution("rl-envkit").read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError, OSError):
        direct = {}
    url = urlparse(str(direct.get("url", "")))
    editable = bool((direct.get("dir_info") or {}).get("editable"))
    if editable and url.scheme == "file" and Path(unquote(url.path)).resolve() == root:
        return f"editable, {root}"
    if (root / "pyproject.toml").is_file() and (root / "templates").is_dir():
        return f"checkout, {root}"
    return str(_PKG)


def templates_dir() -> Path:
    return data_dir("templates")


def skills_dir() -> Path:
    return data_dir("skills")
