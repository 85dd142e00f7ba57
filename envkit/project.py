"""Locating an environment on disk and the Python interpreter that serves it."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from envkit.errors import ServerStartError, SpecError, UsageError
from envkit.manifest import MANIFEST_NAME, Manifest, read_manifest


@dataclass
class EnvProject:
    """An environment directory and its manifest.

    Attributes:
        root: absolute path of the directory holding ``openenv.yaml``.
        manifest: the validated manifest.
    """

    root: Path
    manifest: Manifest

    @classmethod
    def load(cls, path: str | os.PathLike[str] = ".") -> EnvProject:
        """Load the environment at ``path``.

        Raises:
            UsageError: ``path`` does not exist or is not a directory.
            SpecError: no or invalid ``openenv.yaml`` (see :func:`read_manifest`).
        """
        root = Path(path).expanduser()
        if not root.exists():
            raise UsageError(f"{root} does not exist.", hint="Pass the environment's directory.")
        if not root.is_dir():
            raise UsageError(f"{root} is not a directory.",
                             hint=f"Pass the directory that holds {MANIFEST_NAME}.")
        root = root.resolve()
        return cls(root=root, manifest=read_manifest(root))


def resolve_python(root: Path, python: str | None = None) -> str:
    """Choose the interpreter that serves the environment at ``root``.

    Order: ``python`` (the ``--python`` option) when given, else ``root/.venv/bin/python``
    when it exists, else the interpreter running envkit. An explicit option wins over the
    project's venv because the user asked for it.

    Raises:
        UsageError: ``python`` was given but is not an executable file.
    """
    if python:
        candidate = Path(python).expanduser()
        if not candidate.is_file() and os.sep not in python:
            from shutil import which

            found = which(python)
            candidate = Path(found) if found else candidate
        if not candidate.is_file() or not os.access(candidate, os.X_OK):
            raise UsageError(f"--python {python}: no such executable.",
                             hint="Pass the path of a Python interpreter, e.g. .venv/bin/python.")
        return str(candidate)
    venv = root / ".venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if venv.is_file():
        return str(venv)
    return sys.executable


_PROBE = (
    "import importlib.util as u, sys\n"
    "missing = [m for m in ('openenv', 'uvicorn', 'fastapi') if u.find_spec(m) is None]\n"
    "print(','.join(missing))\n"
)


def check_runtime(python: str, root: Path) -> None:
    """Make sure ``python`` can import the OpenEnv runtime before starting a server.

    Takes ~50 ms (``find_spec`` only, nothing is imported).

    Raises:
        ServerStartError: openenv, uvicorn or fastapi is not importable there; the hint
            gives the exact install command.
    """
    try:
        out = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True,
                             timeout=30, cwd=root)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServerStartError(f"Cannot run {python}: {exc}.",
                               hint="Pass a working interpreter with --python.") from None
    missing = [m for m in out.stdout.strip().split(",") if m]
    if out.returncode != 0 or missing:
        names = ", ".join(missing) or "?"
        raise ServerStartError(
            f"{python} cannot import {names}, which the environment server needs.",
            hint=f"Install the environment into it: `{python} -m pip install -e {root}` "
            f"(or `cd {root} && uv venv && uv pip install -e .`), or pass another interpreter "
            "with --python.",
        )


def spec_or_none(path: Path) -> Manifest | None:
    """The manifest at ``path`` or ``None`` when it cannot be read (for best-effort callers)."""
    try:
        return read_manifest(path)
    except SpecError:
        return None
