"""`envkit run` on a terminal: the start-up spinner never shares a line with the server's log.

A real `envkit run` under a pseudo-terminal serving the generated echo environment."""

from __future__ import annotations

import re
import sys

import pytest

from envkit.server import free_port, port_in_use
from tests.cli._pty import base_env, run_in_pty

pytestmark = pytest.mark.slow

CSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
SPINNER = re.compile("[\u2800-\u28ff]")  # rich's default "dots" spinner frames (braille)


def _visible_lines(data: bytes) -> list[str]:
    """What each terminal line ends up showing: a carriage return restarts the line."""
    lines = []
    for raw in data.split(b"\n"):
        segments = [CSI.sub(b"", s) for s in raw.split(b"\r")]
        for seg in segments:
            lines.append(seg.decode("utf-8", "replace"))
    return lines


def test_server_log_lines_start_cleanly(echo_env, copy_env):
    env = copy_env(echo_env)
    port = free_port()
    code, data = run_in_pty(
        ["run", str(env), "--python", sys.executable, "--port", str(port)],
        cwd=env,
        env=base_env(),
        until=b"Ctrl-C to stop",
        timeout_s=120,
    )
    text = data.decode("utf-8", "replace")
    assert code == 0, text
    assert SPINNER.search(text), "no spinner was shown: the test would prove nothing"
    log = [line for line in _visible_lines(data) if "INFO:" in line]
    assert any("Started server process" in line for line in log), text
    for line in log:
        assert line.startswith("INFO:"), repr(line)
        assert not SPINNER.search(line), repr(line)
    assert "Stopped." in text
    assert not port_in_use("127.0.0.1", port)
