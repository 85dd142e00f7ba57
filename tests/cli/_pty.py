"""Run a real ``envkit`` subprocess under a pseudo-terminal and read what it wrote."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

ENVKIT = str(Path(sys.executable).parent / "envkit")


def base_env(**extra: str) -> dict[str, str]:
    """The test process's environment without colour switches, a known terminal type and
    width, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS")
    }
    env.update({"TERM": "xterm-256color", "COLUMNS": "200", **extra})
    return env


def run_in_pty(
    args: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_s: float = 60.0,
    until: bytes | None = None,
) -> tuple[int | None, bytes]:
    """Run ``envkit ARGS`` with stdout and stderr on one pseudo-terminal.

    Args:
        args: arguments after ``envkit``.
        cwd: working directory. env: the whole environment.
        timeout_s: seconds before the process is killed.
        until: stop reading (and send SIGINT) once these bytes were read; ``None`` reads to
            the end.

    Returns:
        (exit code or ``None`` when it was interrupted, every byte written to the terminal).
    """
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [ENVKIT, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        start_new_session=True,
    )
    os.close(follower)
    data = bytearray()
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: every writer is gone
                    break
                if not chunk:
                    break
                data += chunk
                if until is not None and until in data:
                    proc.send_signal(2)
                    until = None
            elif proc.poll() is not None and not ready:
                break
        code = proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
    return code, bytes(data)
