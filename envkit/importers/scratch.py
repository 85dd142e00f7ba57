"""A source imported into a temporary environment for one command (``envkit validate
verifiers:DIR``): the environment ``envkit import`` would write, with its locked venv, removed
afterwards.

Validating a verifiers taskset is then one command, as peers that audit tasksets offer: the
taskset is played by the same generated server a user gets from ``envkit import``, so the
report is the one ``envkit validate`` gives after an import.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from envkit.envdir.uv import uv_binary
from envkit.errors import UsageError
from envkit.importers import import_environment, parse_source

SYNC_TIMEOUT_S = 900.0
"""Seconds ``uv sync`` gets to build the environment's venv (a cold uv cache downloads
openenv and its dependencies)."""


def env_name(target: str) -> str:
    """A valid environment name for ``target`` (a directory or a module name): its last
    part, lower-case, in kebab-case; ``taskset`` when nothing is left."""
    last = re.split(r"[\\/]", target.rstrip("/\\"))[-1].split(".")[-1]
    name = re.sub(r"[^a-z0-9]+", "-", last.lower()).strip("-")
    return name if name and name[0].isalpha() else "taskset"


@contextmanager
def imported(source: str, progress: Callable[[str], None] | None = None) -> Iterator[Path]:
    """Import ``source`` (``verifiers:DIR`` or ``verifiers:MODULE``) into a temporary
    directory, build its venv (``uv sync --frozen``: the locked dependencies and the
    environment itself, in ``ENV/.venv``) and yield the environment directory; the temporary
    directory is removed on exit, also on error.

    Raises:
        UsageError: not a ``verifiers:`` source; the import fails (its own message); no uv;
            the lock or the venv cannot be made (needs PyPI or a warm uv cache).
    """
    kind, target = parse_source(source)
    if kind != "verifiers":
        raise UsageError(
            f"`{source}` is not a verifiers source; envkit validate imports `verifiers:DIR` "
            "or `verifiers:MODULE` itself.",
            hint=f"Import it first (`envkit import {source} NAME`), then validate NAME.",
        )
    say = progress or (lambda _line: None)
    scratch = Path(tempfile.mkdtemp(prefix="envkit-validate-"))
    try:
        say(f"importing {source} into a temporary environment")
        result = import_environment(source, env_name(target), output_dir=scratch, skills=False)
        if result.lock.status != "written":
            raise UsageError(
                f"Cannot lock the environment imported from {source}: {result.lock.message}",
                hint="`uv lock` needs PyPI (or a warm uv cache); import it with "
                f"`envkit import {source} NAME --no-lock` and validate NAME with --python.",
            )
        _sync(result.path, say)
        yield result.path
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _sync(root: Path, say: Callable[[str], None]) -> None:
    """``uv sync --frozen`` in ``root``.

    Raises:
        UsageError: no uv, or the sync failed or ran out (the last line of its output).
    """
    uv = uv_binary()
    if uv is None:
        raise UsageError(
            "Validating a verifiers source needs uv to build the imported environment's venv.",
            hint="Install it (`pip install uv`), or import the taskset with `envkit import` "
            "and validate that directory.",
        )
    say("building its venv (uv sync)")
    try:
        proc = subprocess.run(
            [uv, "sync", "--frozen", "--quiet"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=SYNC_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise UsageError(
            f"`uv sync` of the imported environment took more than {SYNC_TIMEOUT_S:g} s.",
            hint="Check the network to PyPI, or warm uv's cache with `envkit import` first.",
        ) from None
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        raise UsageError(
            f"`uv sync` of the imported environment failed: {lines[-1] if lines else proc.returncode}.",
            hint="Check the network to PyPI, or import it with `envkit import` and build "
            "its venv yourself.",
        )
