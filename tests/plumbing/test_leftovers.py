"""Nothing survives an environment (issue #12, defects 3 and 4): a flooding server costs at most
1 MB of memory and no file; a grandchild that calls setsid() and holds a port is killed when
`validate`, `run` or `eval` stops, and reported."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from envkit.server import LOG_TAIL_BYTES, free_port, port_in_use, start_server
from tests.helpers import descendants, pids_with_cmdline, process_alive

HOSTILE = Path(__file__).parent.parent / "evaluation" / "envs" / "hostile"


@pytest.fixture(autouse=True)
def private_tmp(monkeypatch, tmp_path_factory) -> Path:
    """A temp dir of our own (other processes share /tmp), for envkit and its children."""
    tmp = tmp_path_factory.mktemp("tmpdir")
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def _logs() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "envkit-server-*.log")))


@pytest.fixture
def setsid_env(monkeypatch, tmp_path):
    """HOSTILE_MODE=setsid; yields a function returning (pid, port) of the grandchild."""
    state = tmp_path / "state"
    state.mkdir()
    monkeypatch.setenv("HOSTILE_MODE", "setsid")
    monkeypatch.setenv("HOSTILE_STATE_DIR", str(state))
    logs_before = _logs()

    def grandchild(wait_s: float = 120) -> tuple[int, int]:
        path = state / "grandchild"
        deadline = time.monotonic() + wait_s
        while not path.exists():
            assert time.monotonic() < deadline, "the grandchild never started"
            time.sleep(0.1)
        pid, port = path.read_text().split()
        return int(pid), int(port)

    yield grandchild
    assert _logs() <= logs_before, "a server log file was left behind"


def _assert_gone(pid: int, port: int) -> None:
    deadline = time.monotonic() + 3
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = process_alive(pid)
    if alive:  # clean up for the next test before failing
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"the setsid() grandchild {pid} survived"
    assert not port_in_use("127.0.0.1", port), f"port {port} is still held"


def test_flooding_server_keeps_one_megabyte_in_memory_and_no_file():
    before = _logs()
    server = start_server(
        HOSTILE, "server.app:app", python=sys.executable, env={"HOSTILE_MODE": "flood"}
    )
    try:
        server.wait_healthy(timeout_s=180)
        deadline = time.monotonic() + 60
        # uvicorn's own start-up lines (its other pipe) may land after the first flood
        # lines: the tail is the flood once it has kept writing past them
        while server.log.total_bytes < 5 * LOG_TAIL_BYTES or "flood flood" not in (
            server.log_tail(3)
        ):
            assert time.monotonic() < deadline, (server.log.total_bytes, server.log_tail(3))
            time.sleep(0.1)
        assert len(server.log._buf) <= LOG_TAIL_BYTES
        assert _logs() <= before
    finally:
        server.stop(grace_s=1)
    assert not server.alive()


def test_server_stop_kills_a_setsid_grandchild_and_reports_it(setsid_env):
    server = start_server(HOSTILE, "server.app:app", python=sys.executable)
    try:
        pid, port = setsid_env()
        assert port_in_use("127.0.0.1", port) and os.getsid(pid) != os.getsid(server.pid)
    finally:
        server.stop(grace_s=1)
    _assert_gone(pid, port)
    assert any(s.startswith(f"pid {pid}:") for s in server.strays), server.strays


def test_what_the_server_writes_to_its_temporary_directory_goes_with_it(
    monkeypatch, tmp_path, private_tmp
):
    monkeypatch.setenv("HOSTILE_MODE", "tmpfile")
    monkeypatch.setenv("HOSTILE_STATE_DIR", str(tmp_path))
    server = start_server(HOSTILE, "server.app:app", python=sys.executable)
    try:
        server.wait_healthy(timeout_s=180)
        made = Path((tmp_path / "tmpfile").read_text())
        assert made.parent == Path(server.tmpdir) and made.is_file()
        assert Path(server.tmpdir).parent == private_tmp  # under the caller's TMPDIR
    finally:
        server.stop(grace_s=1)
    assert not made.exists() and not Path(server.tmpdir).exists()
    assert list(private_tmp.iterdir()) == []


def test_eval_leaves_nothing_and_notes_what_it_killed(setsid_env):
    from envkit.evaluation import evaluate

    result = evaluate(HOSTILE, policy="random", episodes=1, python=sys.executable)
    _assert_gone(*setsid_env(wait_s=1))
    assert any("left the server's process group" in n for n in result.notes), result.notes


def test_validate_leaves_nothing(cli, setsid_env):
    result = cli(
        "validate", HOSTILE, "--python", sys.executable, "--episodes", "1", "--timeout", "240"
    )
    assert result.exit_code in (0, 1), result.stderr
    _assert_gone(*setsid_env(wait_s=1))


def test_a_killed_envkit_leaves_nothing_behind(setsid_env, private_tmp):
    """SIGKILL gives envkit no chance to stop its server: its reaper stops the server and
    the grandchild that left the server's process group, frees the port and removes the
    server's temporary directory."""
    server_port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "envkit", "run", str(HOSTILE), "--python", sys.executable]
        + ["--port", str(server_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        pid, port = setsid_env()
        server = pids_with_cmdline("--fd") & descendants(proc.pid)
        assert server, "envkit run started no uvicorn server"
        assert len(list(private_tmp.glob("envkit-server-*"))) == 1
        proc.kill()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 10  # the reaper's SIGTERM, its grace, then SIGKILL
    while any(process_alive(p) for p in server | {pid}) and time.monotonic() < deadline:
        time.sleep(0.1)
    _assert_gone(pid, port)
    assert not any(process_alive(p) for p in server), "the server outlived a killed envkit"
    assert not port_in_use("127.0.0.1", server_port)
    deadline = time.monotonic() + 5  # removed after the processes that wrote there
    while list(private_tmp.glob("envkit-server-*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list(private_tmp.glob("envkit-server-*")) == []


def test_run_leaves_nothing_after_ctrl_c(setsid_env):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "envkit",
            "run",
            str(HOSTILE),
            "--python",
            sys.executable,
            "--port",
            str(free_port()),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    try:
        pid, port = setsid_env()
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    _assert_gone(pid, port)
    assert f"killed a process that had left the server's process group: pid {pid}" in err.replace(
        "\n", " "
    ).replace("  ", " ")
