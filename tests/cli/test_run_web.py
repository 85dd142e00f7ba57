"""`envkit run --web` as users run it: gradio importable (the rest of the suite hides it from
the processes it starts, tests/_without_gradio) and ENABLE_WEB_INTERFACE=true, so OpenEnv
mounts its web UI and /web must answer."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from envkit.server import free_port, port_in_use
from tests.helpers import WITHOUT_GRADIO, descendants, process_alive

pytestmark = pytest.mark.slow

STARTUP_S = 180.0  # gradio's import alone is seconds on a loaded 2-core machine


def _with_gradio() -> dict[str, str]:
    """This process's environment with :data:`tests.helpers.WITHOUT_GRADIO` off PYTHONPATH."""
    parts = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    kept = os.pathsep.join(p for p in parts if p and p != str(WITHOUT_GRADIO))
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": kept}
    if not kept:
        env.pop("PYTHONPATH")
    return env


def _wait_for(proc: subprocess.Popen, log: Path, pattern: str) -> re.Match[str]:
    """Wait (up to :data:`STARTUP_S`) until ``log`` (the run's stderr) matches ``pattern``."""
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        m = re.search(pattern, log.read_text(errors="replace"))
        if m:
            return m
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"envkit run never printed {pattern!r}:\n{log.read_text()}")


def test_run_web_serves_openenvs_web_ui_with_gradio(echo_env: Path, tmp_path: Path) -> None:
    env = _with_gradio()
    probe = subprocess.run(
        [sys.executable, "-c", "import gradio"], env=env, capture_output=True, timeout=120
    )
    assert probe.returncode == 0, f"gradio is not importable here: {probe.stderr[-500:]!r}"
    port = free_port()
    log = tmp_path / "run.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "envkit", "run", str(echo_env), "--python", sys.executable]
            + ["--port", str(port), "--web"],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
        )
    try:
        url = _wait_for(proc, log, r"is serving at (http://\S+)").group(1)
        servers = descendants(proc.pid)
        with httpx.Client(timeout=60, trust_env=False, follow_redirects=True) as client:
            page = client.get(url + "/web")
            assert page.status_code == 200, page.text[:500]
            assert "gradio" in page.text.lower(), page.text[:500]
            assert client.get(url + "/health").status_code == 200  # the API still serves
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        assert proc.returncode == 0, log.read_text()
        assert not any(process_alive(p) for p in servers), "orphan server process"
        assert not port_in_use("127.0.0.1", port)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
