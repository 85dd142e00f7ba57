"""The taskset's worker process, seen from the OpenEnv server (stdlib only).

verifiers 0.4.0 and openenv 0.10 cannot share a venv (verifiers pins `mcp==2.0.0`, openenv's
fastmcp 3 needs `mcp<2`), so the taskset runs in a second interpreter: `VERIFIERS_PYTHON` when
set (a Python with `server/verifiers-requirements.txt` installed, as the Docker image has),
else `uv run --no-project --with-requirements server/verifiers-requirements.txt` (uv caches
that environment after the first start). One worker per server process; calls are serialised.
"""

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional

HERE = Path(__file__).resolve().parent
BRIDGE = HERE / "verifiers_v1_bridge.py"
REQUIREMENTS = HERE / "verifiers-requirements.txt"


def command(package: str) -> List[str]:
    """The worker's command line.

    Raises:
        RuntimeError: neither `VERIFIERS_PYTHON` nor uv is available.
    """
    python = os.environ.get("VERIFIERS_PYTHON")
    if python:
        return [python, str(BRIDGE), "serve", package]
    uv = shutil.which("uv")
    if uv is None:
        try:
            from uv import find_uv_bin  # the `uv` distribution ships the binary

            uv = find_uv_bin()
        except ImportError:
            raise RuntimeError("the taskset needs `uv` or VERIFIERS_PYTHON "
                               "(a Python with server/verifiers-requirements.txt installed)")
    return [uv, "run", "--no-project", "--quiet", "--python", sys.executable,
            "--with-requirements", str(REQUIREMENTS), "python", str(BRIDGE), "serve", package]


class Worker:
    """A JSON-lines channel to the bridge's `serve` loop, started on first use."""

    def __init__(self, package: str) -> None:
        self.package = package
        self._proc: Optional[subprocess.Popen] = None
        self._lock = threading.Lock()

    def call(self, op: str, **fields: Any) -> Dict[str, Any]:
        """One request; its answer.

        Raises:
            ValueError: the taskset raised (its type and message), or the worker died.
        """
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._proc = subprocess.Popen(
                    command(self.package), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    text=True, cwd=str(HERE.parent))
            proc = self._proc
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
            except OSError as exc:
                raise ValueError(f"the verifiers worker is gone ({exc})") from None
            if not line:
                raise ValueError(f"the verifiers worker exited ({proc.wait()})")
        reply = json.loads(line)
        if "error" in reply:
            raise ValueError(reply["error"])
        return reply["ok"]
