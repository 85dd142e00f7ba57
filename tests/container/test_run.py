"""`envkit run --docker` and `envkit stop` against a real Docker engine (issue #4)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.container._util import containers_with, write_dockerfile

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("docker_engine")]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def detached(built_echo, dclient, run_id):
    """`envkit run --docker --detach` of the session's echo image: (url, name)."""
    from tests.conftest import Cli

    r = Cli()(
        "run",
        "--docker",
        built_echo.path,
        "--detach",
        "--tag",
        built_echo.tag,
        "--label",
        f"envkit.test={run_id}",
        "--label",
        "envkit.case=detached",
        "-e",
        "ECHO_TEST_VAR=42",
    )
    assert r.exit_code == 0, r.output
    url = r.stdout.strip()
    m = re.search(r"Stop it with: (envkit stop (\S+))", r.stderr)
    assert m, r.stderr
    yield url, m.group(2), r
    for c in containers_with(dclient, run_id, **{"envkit.case": "detached"}):
        c.remove(force=True)


def test_detach_prints_url_and_exact_stop_command(detached, dclient):
    url, name, r = detached
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)
    assert f"serving at {url} in container {name}" in r.stderr
    c = dclient.containers.get(name)
    assert c.status == "running"
    assert c.labels["envkit.managed"] == "true"
    assert "envkit.owner" not in c.labels  # meant to outlive envkit: no reaper removes it
    binding = c.attrs["NetworkSettings"]["Ports"]["8000/tcp"][0]
    assert binding["HostIp"] == "127.0.0.1" and url.endswith(":" + binding["HostPort"])
    env = c.attrs["Config"]["Env"]
    assert "ECHO_TEST_VAR=42" in env and "ENABLE_WEB_INTERFACE=true" not in env


def test_episode_over_ws_with_openenv_client(detached):
    from openenv.core import GenericEnvClient

    url = detached[0]
    with GenericEnvClient(base_url=url).sync() as env:
        first = env.reset(seed=3)
        target = first.observation["target"]
        assert target and first.done is False
        miss = env.step({"message": "x"})
        assert 0.0 <= miss.reward < 1.0 and miss.done is False
        hit = env.step({"message": target})
        assert hit.reward == 1.0 and hit.done is True
        assert env.state()["step_count"] == 2


def test_runtime_validate_against_the_container(cli, detached, built_echo):
    r = cli("validate", built_echo.path, "--url", detached[0], "--format", "json")
    assert r.exit_code == 0, r.output
    assert '"passed": true' in r.stdout.replace(" ", "").replace('"passed":true', '"passed": true')


def test_stop_refuses_foreign_containers_and_stops_envkit_ones(cli, detached, dclient, run_id):
    foreign = dclient.containers.run(
        "python:3.11-slim",
        ["sleep", "300"],
        detach=True,
        name=f"envkit-test-foreign-{run_id}",
        labels={"envkit.test": run_id},
    )
    try:
        r = cli("stop", foreign.name)
        assert r.exit_code == 2
        assert "not a container envkit started" in r.stderr
        foreign.reload()
        assert foreign.status == "running"
        # Label-selected stop ignores it too (it lacks envkit.managed=true).
        r = cli("stop", "--label", f"envkit.test={run_id}", "--label", "envkit.case=detached")
        assert r.exit_code == 0, r.output
        assert r.stdout.split() == [detached[1]]
        assert containers_with(dclient, run_id, **{"envkit.case": "detached"}) == []
        foreign.reload()
        assert foreign.status == "running"
        r = cli("stop", "no-such-container-" + run_id)
        assert r.exit_code == 2 and "No container named" in r.stderr
    finally:
        foreign.remove(force=True)


def test_busy_port_is_a_clear_error(cli, built_echo, dclient, run_id):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = cli(
            "run",
            "--docker",
            built_echo.path,
            "--detach",
            "--tag",
            built_echo.tag,
            "--port",
            str(port),
            "--label",
            f"envkit.test={run_id}",
            "--label",
            "envkit.case=busy",
        )
    assert r.exit_code == 2, r.output
    assert f"Port {port} on 127.0.0.1 is already in use" in r.stderr
    assert containers_with(dclient, run_id, **{"envkit.case": "busy"}) == []


def test_early_exit_is_exit_1_with_log_and_nothing_left(cli, copy_env, built_echo, dclient, run_id):
    env = copy_env(built_echo.path, "early")
    df = (env / "Dockerfile").read_text()
    df = re.sub(
        r"^CMD .*$",
        'CMD ["python", "-c", "import os; print(\'early-exit-marker\', '
        "os.environ.get('ENABLE_WEB_INTERFACE'), os.environ.get('K1')); "
        'raise SystemExit(7)"]',
        df,
        flags=re.MULTILINE,
    )
    write_dockerfile(env, df)
    r = cli(
        "run",
        "--docker",
        env,
        "--detach",
        "--tag",
        f"envkit-test-early:{run_id}",
        "--label",
        f"envkit.test={run_id}",
        "--label",
        "envkit.case=early",
        "--startup-timeout",
        "60",
        "--web",
        "-e",
        "K1=v=1",
    )
    assert r.exit_code == 1, r.output
    assert "exited with code 7 before it was healthy" in r.stderr
    # The log tail shows the container's output, and --web / -e reached the container.
    assert "│ early-exit-marker true v=1" in r.stderr
    assert containers_with(dclient, run_id, **{"envkit.case": "early"}) == []


def test_never_healthy_times_out_exit_1(cli, copy_env, built_echo, dclient, run_id):
    env = copy_env(built_echo.path, "sleepy")
    df = re.sub(
        r"^CMD .*$", 'CMD ["sleep", "300"]', (env / "Dockerfile").read_text(), flags=re.MULTILINE
    )
    write_dockerfile(env, df)
    r = cli(
        "run",
        "--docker",
        env,
        "--detach",
        "--tag",
        f"envkit-test-sleepy:{run_id}",
        "--label",
        f"envkit.test={run_id}",
        "--label",
        "envkit.case=sleepy",
        "--startup-timeout",
        "2",
    )
    assert r.exit_code == 1, r.output
    assert "did not answer GET /health within 2 s" in r.stderr
    assert containers_with(dclient, run_id, **{"envkit.case": "sleepy"}) == []


def _foreground(built_echo, run_id: str, case: str, until: str) -> tuple[subprocess.Popen, list]:
    """`envkit run --docker` of the session's echo image in a child process, labelled
    ``envkit.case=case``, its stderr read until a line holds ``until`` (or 120 s passed):
    ``(process, the lines read)``."""
    cmd = [sys.executable, "-m", "envkit", "run", "--docker", str(built_echo.path)]
    cmd += ["--tag", built_echo.tag, "--label", f"envkit.test={run_id}"]
    cmd += ["--label", f"envkit.case={case}"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    seen: list[str] = []
    deadline = time.monotonic() + 120
    assert proc.stderr is not None
    for line in proc.stderr:
        seen.append(line)
        if until in line or time.monotonic() > deadline:
            break
    return proc, seen


def test_foreground_run_ctrl_c_stops_and_removes(built_echo, dclient, run_id):
    proc, seen = _foreground(built_echo, run_id, "fg", "Application startup complete")
    try:
        assert any("is serving at http://127.0.0.1:" in ln for ln in seen), "".join(seen)
        assert len(containers_with(dclient, run_id, **{"envkit.case": "fg"})) == 1
        proc.send_signal(signal.SIGINT)
        _out, rest = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, "".join(seen) + rest
    assert "Stopped and removed" in rest
    assert containers_with(dclient, run_id, **{"envkit.case": "fg"}) == []


def test_a_killed_foreground_run_leaves_no_container(built_echo, dclient, run_id):
    """SIGKILL gives `envkit run --docker` no chance to remove its container: its reaper
    does."""
    proc, seen = _foreground(built_echo, run_id, "killed", "is serving at http://127.0.0.1:")
    try:
        [container] = containers_with(dclient, run_id, **{"envkit.case": "killed"})
        assert "envkit.owner" in container.labels, "".join(seen)
        proc.kill()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    deadline = time.monotonic() + 30
    while containers_with(dclient, run_id, **{"envkit.case": "killed"}):
        assert time.monotonic() < deadline, "the container outlived a killed envkit run"
        time.sleep(0.2)


def test_docker_only_options_need_docker(cli, built_echo):
    r = cli("run", built_echo.path, "--detach")
    assert r.exit_code == 2 and "--detach needs --docker" in r.stderr
    r = cli("run", built_echo.path, "--docker", "--reload")
    assert r.exit_code == 2 and "--reload does not apply to --docker" in r.stderr
