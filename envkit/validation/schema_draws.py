"""Fuzzed actions drawn from a JSON Schema with hypothesis-jsonschema, sandboxed.

hypothesis-jsonschema (a well-kept generator of values that satisfy a JSON Schema, built on
hypothesis) draws the actions, seeded, derandomised and without a database, inside a sandbox
that keeps hypothesis off the user's disk and independent of the modules loaded.

Importing this module imports hypothesis (about 0.3 s), so :mod:`envkit.validation.fuzz`
imports it only when actions are drawn or warmed up: a ``--static`` run never pays for it.
hypothesis-jsonschema itself (another 0.4 s) is imported inside the sandbox, because its
import builds hypothesis' unicode tables in hypothesis' home directory.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import HealthCheck, Phase, configuration, given, settings
from hypothesis import seed as hseed
from hypothesis.errors import HypothesisException
from hypothesis.internal.conjecture import providers
from hypothesis.internal.conjecture import utils as cu
from hypothesis.strategies import SearchStrategy
from hypothesis.strategies._internal import core as strategies_core

from envkit.fsutil import cache_dir

_SANDBOX_LOCK = threading.Lock()

#: ``from_schema`` of hypothesis-jsonschema: a JSON Schema -> a hypothesis strategy.
FromSchema = Callable[[dict[str, Any]], SearchStrategy[Any]]


@contextlib.contextmanager
def sandbox() -> Iterator[FromSchema]:
    """Run hypothesis without touching the user's disk and independently of loaded modules;
    yields hypothesis-jsonschema's ``from_schema``.

    * hypothesis caches unicode tables under ``./.hypothesis`` of the working directory:
      point its home at envkit's cache directory for the duration (restored after), so
      nothing is written where the user runs envkit; no example database is ever used;
    * hypothesis mixes constants found in "local" source files into its draws, which makes
      the draws depend on the working directory and on which modules are loaded: switch that
      off so a seed gives the same actions everywhere;
    * hypothesis-jsonschema 0.23 calls ``many.more()``, which hypothesis >= 6.14x removed:
      give it a compatible shim when needed;
    * hypothesis-jsonschema defines an ``@st.composite`` inside every object draw, and each
      definition makes hypothesis re-read and parse the function's source (a deprecation
      check, ``is_first_param_referenced_in_function``): about 40 % of a tool-call schema's
      draw time. The answer depends on the source alone, so it is remembered per code
      object for the duration (the same draws).
    """
    with _SANDBOX_LOCK:  # hypothesis' home is process-wide: one sandbox at a time
        saved_home = getattr(configuration, "__hypothesis_home_directory", None)
        with _cache_home() as home:
            # Before importing hypothesis_jsonschema: its import builds the unicode tables.
            configuration.set_hypothesis_home_dir(home)
            import hypothesis_jsonschema._from_schema as hjs

            saved_constants = getattr(providers, "_get_local_constants", None)
            saved_cu = hjs.cu
            saved_referenced = strategies_core.is_first_param_referenced_in_function
            strategies_core.is_first_param_referenced_in_function = _Referenced(saved_referenced)
            if saved_constants is not None:
                empty = providers.Constants()
                providers._get_local_constants = lambda: empty
            if not hasattr(cu.many, "more"):
                hjs.cu = _CuCompat(cu)
            try:
                yield hjs.from_schema
            finally:
                configuration.set_hypothesis_home_dir(saved_home)
                if saved_constants is not None:
                    providers._get_local_constants = saved_constants
                hjs.cu = saved_cu
                strategies_core.is_first_param_referenced_in_function = saved_referenced


class _Referenced:
    """hypothesis' ``is_first_param_referenced_in_function`` remembered per code object
    (functions defined from the same source share it); a callable without one is asked
    every time."""

    def __init__(self, check: Callable[[object], bool]):
        self._check = check
        # keyed by the code objects of hypothesis-jsonschema's nested functions: as many as
        # its source defines, so the dict stays small
        self._seen: dict[object, bool] = {}

    def __call__(self, f: object) -> bool:
        code = getattr(f, "__code__", None)
        if code is None:
            return self._check(f)
        if code not in self._seen:
            self._seen[code] = self._check(f)
        return self._seen[code]


@contextlib.contextmanager
def _cache_home() -> Iterator[str]:
    """hypothesis' home: ``$XDG_CACHE_HOME/envkit/hypothesis`` (unicode tables only, reused
    across runs), else a temporary directory removed afterwards."""
    home = cache_dir("hypothesis")
    if home is not None:
        yield str(home)
        return
    with tempfile.TemporaryDirectory(prefix="envkit-hypothesis-") as tmp:
        yield tmp


class _ManyCompat:
    """``many(...).more()`` on top of hypothesis' iterator-style ``many``."""

    def __init__(self, impl: Callable[..., Any], data: object, **kwargs: object):
        self._many = impl(data, **kwargs)
        self._many.__enter__()
        self._iter = iter(self._many)
        self._open = True

    def more(self) -> bool:
        try:
            next(self._iter)
            return True
        except StopIteration:
            if self._open:
                self._open = False
                self._many.__exit__(None, None, None)
            return False

    def reject(self, why: str | None = None) -> None:
        self._many.reject(why)


class _CuCompat:
    """hypothesis' ``conjecture.utils`` module with the ``many`` hypothesis-jsonschema 0.23
    expects; every other name is the module's own."""

    def __init__(self, utils: object):
        self._cu = utils

    def many(self, data: object, **kwargs: object) -> _ManyCompat:
        return _ManyCompat(self._cu.many, data, **kwargs)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._cu, name)


def draw(
    schema: dict[str, Any], count: int, seed: int, keep: Callable[[object], bool]
) -> list[dict[str, Any]]:
    """Up to ``count`` JSON objects satisfying ``schema`` for which ``keep`` holds, the same
    list for the same seed (see :func:`envkit.validation.fuzz.generate_actions`).

    Raises:
        ValueError: hypothesis-jsonschema cannot generate from this schema (unsupported
            keyword or unsatisfiable); the message says why.
    """
    out: list[dict[str, Any]] = []
    try:
        with sandbox() as from_schema:
            strategy = from_schema(schema).filter(lambda v: isinstance(v, dict) and keep(v))

            @settings(
                database=None,
                max_examples=count,
                phases=[Phase.generate],
                deadline=None,
                suppress_health_check=list(HealthCheck),
                report_multiple_bugs=False,
                print_blob=False,
            )
            @hseed(seed)
            @given(strategy)
            def _collect(value: dict[str, Any]) -> None:
                if len(out) < count:
                    out.append(value)

            _collect()
    except (HypothesisException, ValueError, TypeError, RecursionError) as exc:
        raise ValueError(
            f"cannot generate actions from the action schema: {type(exc).__name__}: {exc}"
        ) from None
    return out
