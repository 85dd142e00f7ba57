"""The validate text report is coloured by severity on a terminal and plain elsewhere:
real ``envkit validate`` subprocesses under a pseudo-terminal and through a pipe."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.cli._pty import ENVKIT, base_env, run_in_pty

# An SGR sequence that sets a colour: 30-37/90-97 foreground, or 38;... extended.
COLOUR = re.compile(rb"\x1b\[[0-9;]*(?:3[0-8]|9[0-7])(?:;[0-9;]*)?m")
ANY_ESCAPE = re.compile(rb"\x1b\[")

MANIFEST = """spec_version: 1
name: broken
type: space
runtime: fastapi
app: server.app:app
port: not-a-port
"""


@pytest.fixture()
def broken(tmp_path: Path) -> Path:
    """An environment whose manifest has error findings (a port that is no number)."""
    (tmp_path / "openenv.yaml").write_text(MANIFEST)
    return tmp_path


def _error_lines(data: bytes) -> list[bytes]:
    return [line for line in data.splitlines() if b"error" in line and b"EK" in line]


def test_errors_are_red_on_a_terminal(broken):
    code, data = run_in_pty(["validate", "--static"], cwd=broken, env=base_env())
    assert code == 1, data.decode(errors="replace")
    lines = _error_lines(data)
    assert lines, data.decode(errors="replace")
    assert all(b"\x1b[1;31m" in line or b"\x1b[31m" in line for line in lines), lines
    assert re.search(rb"\x1b\[[0-9;]*31m(?:\x1b\[[0-9;]*m)*FAILED", data)


@pytest.mark.parametrize("value", ["1", "yes"])
def test_no_color_under_a_terminal_is_plain(broken, value):
    code, data = run_in_pty(["validate", "--static"], cwd=broken, env=base_env(NO_COLOR=value))
    assert code == 1
    assert _error_lines(data)
    report = data[data.index(b"envkit validate") :]
    assert not ANY_ESCAPE.search(report), report.decode(errors="replace")


def test_empty_no_color_keeps_colour(broken):
    # no-color.org: only a non-empty value switches colour off.
    _, data = run_in_pty(["validate", "--static"], cwd=broken, env=base_env(NO_COLOR=""))
    assert COLOUR.search(b"\n".join(_error_lines(data)))


def test_dumb_terminal_is_plain(broken):
    _, data = run_in_pty(["validate", "--static"], cwd=broken, env=base_env(TERM="dumb"))
    assert _error_lines(data)
    assert not COLOUR.search(data)


def test_piped_report_is_plain(broken):
    proc = subprocess.run(
        [ENVKIT, "validate", "--static"],
        cwd=broken,
        env=base_env(),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert _error_lines(proc.stdout)
    assert not ANY_ESCAPE.search(proc.stdout + proc.stderr)


def test_force_color_colours_a_pipe(broken):
    proc = subprocess.run(
        [ENVKIT, "validate", "--static"],
        cwd=broken,
        env=base_env(FORCE_COLOR="1"),
        capture_output=True,
        timeout=60,
    )
    assert COLOUR.search(b"\n".join(_error_lines(proc.stdout)))


def test_output_file_is_plain_under_a_terminal(broken):
    code, data = run_in_pty(
        ["validate", "--static", "--output", "report.txt"], cwd=broken, env=base_env()
    )
    assert code == 1, data.decode(errors="replace")
    written = (broken / "report.txt").read_bytes()
    assert _error_lines(written)
    assert not ANY_ESCAPE.search(written)
