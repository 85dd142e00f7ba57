"""Typer's help renderer without the parts of rich envkit's help never uses.

``typer.rich_utils`` (imported by typer only when it renders help or an error) imports
``rich.markdown`` (and through it ``markdown_it``) and ``rich.traceback`` (``rich.pretty``,
``rich.syntax``, pygments' lexer map) at module level: about 0.13 s of ``envkit --help``'s
~0.35 s. It uses ``Markdown`` only for ``rich_markup_mode="markdown"`` (envkit's commands
use ``"rich"``) and ``Traceback`` only for typer's pretty exceptions (envkit's error handler
prints its own). Typer has no setting that avoids these imports (``rich_markup_mode=None``
drops the whole rich help), so :func:`install` defers them instead:

- a meta path finder that acts on exactly one import, ``typer.rich_utils``, and removes
  itself when it has;
- while that module executes, and only then, ``rich.markdown`` and ``rich.traceback`` (if
  nothing imported them yet) are stand-in modules whose names are deferred classes: calling
  one, reading an attribute of it (``Traceback.from_exception``) or an ``isinstance`` check
  imports the real module then and hands over to the real class; any name the stand-in
  lacks imports the real module at once;
- afterwards the stand-ins leave ``sys.modules``, so every other ``import rich.markdown`` gets
  the real module.

A typer that stops importing these at module level makes this a no-op; one that uses the
names differently still gets the real classes on first use.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Sequence

TARGET = "typer.rich_utils"
# module -> the names typer.rich_utils imports from it.
DEFERRED = {"rich.markdown": ("Markdown",), "rich.traceback": ("Traceback",)}


def _real(module: str) -> types.ModuleType:
    """Import the real ``module`` (dropping a stand-in that is still in place)."""
    current = sys.modules.get(module)
    if isinstance(current, _StandIn):
        del sys.modules[module]
    return importlib.import_module(module)


class _Deferred(type):
    """Metaclass of a deferred class: everything goes to the real class."""

    _module: str
    _name: str

    def _target(cls) -> type:
        return getattr(_real(cls._module), cls._name)

    def __call__(cls, *args: object, **kwargs: object) -> object:
        return cls._target()(*args, **kwargs)

    def __getattr__(cls, name: str) -> object:
        if name.startswith("__") or name in ("_module", "_name"):
            raise AttributeError(name)
        return getattr(cls._target(), name)

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls._target())

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls._target())


class _StandIn(types.ModuleType):
    """A module whose other names import the real module."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(_real(self.__name__), name)


def _stand_in(module: str, names: tuple[str, ...]) -> _StandIn:
    stand_in = _StandIn(module)
    for name in names:
        setattr(stand_in, name, _Deferred(name, (), {"_module": module, "_name": name}))
    return stand_in


class _Loader(importlib.abc.Loader):
    """Runs the real loader with the stand-ins in ``sys.modules``."""

    def __init__(self, real: importlib.abc.Loader) -> None:
        self.real = real

    def __getattr__(self, name: str) -> object:
        # get_source, get_filename, ... (linecache, inspect) are the real loader's.
        return getattr(self.real, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.real.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        placed = {
            name: _stand_in(name, names)
            for name, names in DEFERRED.items()
            if name not in sys.modules
        }
        sys.modules.update(placed)
        try:
            self.real.exec_module(module)
        finally:
            for name, stand_in in placed.items():
                if sys.modules.get(name) is stand_in:
                    del sys.modules[name]


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``typer.rich_utils`` once, with :class:`_Loader` around its loader."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != TARGET:
            return None
        uninstall()
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


_FINDER = _Finder()


def install() -> None:
    """Defer the imports (see the module docstring); a no-op once ``typer.rich_utils`` is
    loaded or when already installed."""
    if TARGET not in sys.modules and _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    """Remove the finder (it stays out once it has acted)."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
