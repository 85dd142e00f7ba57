"""`envkit run`: the generated echo environment, installed into its own venv with openenv 0.10,
served for real on 127.0.0.1, played through OpenEnv's client and raw WebSocket frames,
stopped with no orphan process."""

from __future__ import annotations

import codecs
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envkit.envdir.uv import uv_binary
from envkit.scaffold import init_project
from envkit.server import free_port, port_in_use
from tests.helpers import descendants, process_alive

pytestmark = pytest.mark.slow


def _uv(*args: str, cwd: Path | None = None) -> None:
    subprocess.run([uv_binary(), *args], cwd=cwd, check=True, capture_output=True, timeout=600)


@pytest.fixture(scope="module")
def installed_env(tmp_path_factory) -> tuple[Path, str]:
    """A fresh echo environment installed (editable) into its own venv with openenv 0.10."""
    env = init_project("played-env", output_dir=tmp_path_factory.mktemp("run"), lock=False).path
    _uv("venv", "-q", str(env / ".venv"))
    python = str(env / ".venv" / "bin" / "python")
    _uv("pip", "install", "-q", "--python", python, "-e", str(env), "pytest")
    return env, python


def _start_run(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "envkit", "run", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )


def _wait_for_url(proc: subprocess.Popen, timeout_s: float = 90) -> tuple[str, str]:
    """Read envkit's stderr until it prints the serving URL: (the URL, all read so far).

    Reads the pipe's descriptor directly: a buffered ``readline`` may pull several lines
    into Python's buffer, and ``select`` on the descriptor then waits for more that never
    come."""
    seen = ""
    fd = proc.stderr.fileno()
    decode = codecs.getincrementaldecoder("utf-8")("replace").decode
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            chunk = os.read(fd, 65536)
            seen += decode(chunk)
            m = re.search(r"is serving at (http://\S+)", seen)
            if m:
                return m.group(1), seen
            if not chunk:
                break
        elif proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"envkit run never printed its URL:\n{seen}{proc.stderr.read()}")


def test_installed_package_and_console_script(installed_env):
    env, python = installed_env
    out = subprocess.run(
        [
            python,
            "-c",
            (
                "from played_env import PlayedEnvAction, PlayedEnvEnv, "
                "PlayedEnvObservation; print('ok')"
            ),
        ],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=120,
    )
    assert out.stdout.strip() == "ok", out.stderr
    assert (env / ".venv" / "bin" / "server").exists()


def test_own_tests_pass_in_the_venv(installed_env):
    env, python = installed_env
    proc = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_run_serves_a_real_episode_then_stops_cleanly(installed_env):
    from openenv.core import GenericEnvClient
    from websockets.sync.client import connect

    env, _python = installed_env
    port = free_port()
    proc = _start_run(str(env), "--port", str(port))  # picks env/.venv/bin/python itself
    try:
        url, _ = _wait_for_url(proc)
        assert url == f"http://127.0.0.1:{port}"
        server_pids = descendants(proc.pid)
        assert server_pids, "the server runs as a child of envkit"

        # OpenEnv's own client: a whole episode reaching the max reward
        with GenericEnvClient(base_url=url).sync() as client:
            first = client.reset(seed=11)
            target = first.observation["target"]
            assert client.reset(seed=11).observation["target"] == target
            miss = client.step({"message": "nope"})
            assert 0.0 <= miss.reward < 1.0 and not miss.done
            hit = client.step({"message": target})
            assert hit.reward == 1.0 and hit.done

        # raw frames, as PROTOCOL.md documents them
        with connect(url.replace("http", "ws", 1) + "/ws", open_timeout=10) as ws:
            ws.send(json.dumps({"type": "reset", "data": {"seed": 3, "episode_id": "e-1"}}))
            frame = json.loads(ws.recv(timeout=10))
            assert frame["type"] == "observation" and frame["data"]["done"] is False
            ws.send(json.dumps({"type": "step", "data": {"message": "hi"}}))
            frame = json.loads(ws.recv(timeout=10))
            assert frame["type"] == "observation" and 0 <= frame["data"]["reward"] <= 1
            ws.send(json.dumps({"type": "step", "data": {"msg": "bad"}}))
            frame = json.loads(ws.recv(timeout=10))
            assert frame["type"] == "error" and frame["data"]["code"] == "VALIDATION_ERROR"
            ws.send("notjson")
            assert json.loads(ws.recv(timeout=10))["data"]["code"] == "INVALID_JSON"
            ws.send(json.dumps({"type": "state"}))
            state = json.loads(ws.recv(timeout=10))["data"]
            assert state["episode_id"] == "e-1" and state["step_count"] == 1
            ws.send(json.dumps({"type": "close"}))

        proc.send_signal(signal.SIGINT)  # what Ctrl-C does
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "Stopped." in err
        assert not any(process_alive(p) for p in server_pids), "orphan server process"
        assert not port_in_use("127.0.0.1", port)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sigterm_stops_server_too(installed_env):
    env, _ = installed_env
    port = free_port()  # not the manifest's 8000: another test may serve there meanwhile
    proc = _start_run(str(env), "--port", str(port))
    try:
        url, _ = _wait_for_url(proc)
        assert url == f"http://127.0.0.1:{port}"
        server_pids = descendants(proc.pid)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
        assert not any(process_alive(p) for p in server_pids)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_missing_runtime_names_the_package(cli, installed_env, tmp_path):
    env, _ = installed_env
    _uv("venv", "-q", str(tmp_path / "bare"))
    result = cli("run", env, "--python", tmp_path / "bare" / "bin" / "python")
    assert result.exit_code == 1
    assert "cannot import openenv" in result.stderr
    assert "pip install -e" in result.stderr  # the next step


def test_busy_port(cli, installed_env):
    import socket

    env, _ = installed_env
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        result = cli("run", env, "--port", port)
    assert result.exit_code == 2
    assert f"Port {port}" in result.stderr and "already in use" in result.stderr


def test_not_an_environment(cli, tmp_path):
    result = cli("run", tmp_path)
    assert result.exit_code == 2
    assert "No openenv.yaml" in result.stderr and "envkit init" in result.stderr
    result = cli("run", tmp_path / "missing")
    assert result.exit_code == 2 and "does not exist" in result.stderr


def test_server_crash_at_import_shows_its_log(cli, echo_env, copy_env):
    env = copy_env(echo_env)
    (env / "server" / "app.py").write_text("raise RuntimeError('broken at import')\n")
    result = cli(
        "run", env, "--python", sys.executable, "--startup-timeout", "60", "--port", free_port()
    )
    assert result.exit_code == 1
    assert "exited with code" in result.stderr


KNOBS = Path(__file__).parents[1] / "validation" / "envs" / "knobs"


def _served_for_a_moment(*args: str) -> str:
    """`envkit run KNOBS` (no `.venv` there) until it serves, then Ctrl-C: its stderr."""
    proc = _start_run(str(KNOBS), "--port", str(free_port()), *args)
    try:
        _, seen = _wait_for_url(proc)
        time.sleep(0.5)  # the banner's last lines follow the URL line
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return " ".join((seen + rest).split())  # rich wraps long lines at 80 columns in a pipe


def test_run_warns_when_envkit_own_interpreter_serves():
    err = _served_for_a_moment()
    assert "warning: interpreter: envkit's own interpreter (" in err
    assert "A trainer started from another interpreter will not have openenv" in err


def test_run_does_not_warn_for_an_explicit_python():
    assert "interpreter:" not in _served_for_a_moment("--python", sys.executable)
