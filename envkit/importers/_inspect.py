"""Run a source's inspector script in a throwaway environment with the source's packages.

envkit never installs reasoning-gym or verifiers itself: ``uv run --no-project --with PKG==V``
runs a small script (``inspectors/*.py``, executed, never imported by envkit) in an
ephemeral environment uv caches, and the script prints one JSON document on stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envkit.envdir.uv import uv_binary
from envkit.errors import UsageError

INSPECT_TIMEOUT_S = 900.0
"""A cold uv cache downloads the source's packages (reasoning-gym pulls sympy): minutes."""


def run_inspector(
    script: str, args: Sequence[str], requirements: Sequence[str], *, what: str
) -> dict[str, Any]:
    """Run ``envkit/importers/inspectors/<script>`` with ``args`` in an environment holding
    ``requirements`` (PEP 508 strings, exact pins), with this Python.

    Args:
        script: file name in ``inspectors/`` (a folder without package names, so the script imports the real packages).
        args: its command-line arguments.
        requirements: packages for ``uv run --with``.
        what: the source, for error messages (``reasoning-gym 0.1.25``).

    Returns:
        The JSON object the script printed as its last stdout line.

    Raises:
        UsageError: uv is missing, the packages cannot be installed (no PyPI), the script
            failed or timed out.
    """
    uv = uv_binary()
    if not uv:
        raise UsageError(f"Reading {what} needs uv.", hint="Install it: `pip install uv`.")
    cmd = [uv, "run", "--no-project", "--quiet", "--python", sys.executable]
    for req in requirements:
        cmd += ["--with", req]
    cmd += ["python", str(Path(__file__).with_name("inspectors") / script), *args]
    try:
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=INSPECT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise UsageError(
            f"Reading {what} did not finish within {INSPECT_TIMEOUT_S:g} s.",
            hint="Retry; the first run downloads its packages from PyPI.",
        ) from None
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        err = (proc.stderr or proc.stdout).strip().splitlines()
        cause = err[-1] if err else f"exit code {proc.returncode}"
        raise UsageError(
            f"Could not read {what}: {cause}",
            hint="Check that PyPI is reachable (uv installs the source's packages).",
        )
    try:
        doc = json.loads(lines[-1])
    except ValueError:
        raise UsageError(f"Could not read {what}: unexpected output {lines[-1][:200]!r}.") from None
    return doc if isinstance(doc, dict) else {}
