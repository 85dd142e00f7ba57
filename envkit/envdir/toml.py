"""The one TOML reader: ``pyproject.toml`` of an environment and a template's ``template.toml``.

Every module that reads TOML goes through :func:`parse_toml` or :func:`read_pyproject`, so one
place decides what a broken file is: a syntax error, a file that is not UTF-8, an integer
longer than Python's 4300-digit conversion limit (a plain :class:`ValueError`), or values
nested so deeply that :mod:`tomllib` overflows the stack (``[[[[...]]]]`` a thousand deep
raises :class:`RecursionError`, not :class:`tomllib.TOMLDecodeError`). Edits that must keep a
user's formatting go through tomlkit instead (``envkit migrate``); they do not read facts.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from envkit.fsutil import read_text_bounded

PYPROJECT_NAME = "pyproject.toml"


class TomlError(ValueError):
    """A TOML document could not be read; ``str()`` is the one-line cause."""


def parse_toml(text: str) -> dict[str, Any]:
    """Parse TOML ``text`` (the whole document, already decoded).

    Raises:
        TomlError: a syntax error (the message gives tomllib's line and column), an
            integer too long to convert, or values nested too deeply to parse.
    """
    try:
        return tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, and an integer past Python's digit limit
        raise TomlError(str(exc)) from exc
    except RecursionError:
        raise TomlError("values are nested too deeply") from None


def read_pyproject(root: Path) -> tuple[dict[str, Any] | None, Exception | None]:
    """``(data, error)`` for ``root/pyproject.toml``; ``(None, None)`` when there is none.

    The file is read with :func:`envkit.fsutil.read_text_bounded` (a regular file inside
    ``root``, at most 1 MiB), so a FIFO or a 10 GB file is an error here, not a hang.

    Returns:
        ``(data, None)`` when it parses; ``(None, error)`` when it cannot be read
        (:class:`OSError`, :class:`UnicodeDecodeError`, the bounded reader's errors) or
        parsed (:class:`TomlError`).
    """

    path = root / PYPROJECT_NAME
    if not path.exists() and not path.is_symlink():
        return None, None
    try:
        return parse_toml(read_text_bounded(path, root=root)), None
    except (OSError, UnicodeDecodeError, TomlError) as exc:
        return None, exc
