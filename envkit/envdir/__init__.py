"""An environment directory and the facts envkit reads from it.

- :mod:`envkit.envdir.constants`: names and defaults declared once (the manifest name, the
  default app, the ``module:attr`` pattern, the probe-plan path, the OpenEnv requirement).
- :mod:`envkit.envdir.toml`: the one TOML reader.
- :class:`EnvDir`: one directory, each file read once, facts asked of it.

:class:`EnvDir` and :class:`EnvProject` load on first use (PEP 562): the manifest model they
build on costs ~120 ms of pydantic and YAML imports, which commands that only need
``constants`` or ``toml`` (``envkit init``, ``--help``) must not pay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from envkit.envdir.reader import EnvDir, EnvProject

__all__ = ["EnvDir", "EnvProject"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from envkit.envdir import reader

        return getattr(reader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
