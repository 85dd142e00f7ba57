"""The generated `server` console script (`[project.scripts] server = "<pkg>.server.app:main"`)
takes `--host`/`--port`: `uv run --project . server --port P` serves on P. One template (echo:
every template shares `server/app.py`), its own venv, a real server on 127.0.0.1, stopped by
its PID (process group)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_uv_run_server_serves_on_the_given_port(tmp_path: Path):
    from envkit.scaffold import uv_binary
    from tests.templates.conftest import build_env

    env = build_env(tmp_path, "echo")
    port = _free_port()
    help_text = subprocess.run(
        [str(env.path / ".venv" / "bin" / "server"), "--help"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert "--host" in help_text and "--port" in help_text
    log = (tmp_path / "server.log").open("w")
    # --frozen: the lock as written by `envkit init` (uv run would otherwise re-lock first)
    proc = subprocess.Popen(
        [uv_binary(), "run", "--frozen", "--project", ".", "server", "--port", str(port)],
        cwd=env.path, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"},
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/health"
    try:
        deadline = time.monotonic() + 180  # uv syncs the venv first on a loaded machine
        while True:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    assert response.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, f"no answer from {url} within 180 s"
                time.sleep(0.5)
        assert f"127.0.0.1:{port}" in (tmp_path / "server.log").read_text()
    finally:
        _stop(proc)
        log.close()
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=2)
