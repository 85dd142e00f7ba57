"""`envkit capacity`: N = ceil(S x (1 + headroom) / C) from the real CLI, C read from the
environment, replicas per node from the manifest's resources, and the commands to get there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

APP_WITHOUT_CAPACITY = """\
from openenv.core.env_server.http_server import create_app
app = create_app(Env, Action, Observation)
"""


@pytest.fixture(scope="module")
def guess(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The guess template (C = 16 by its app module; 1 core, 1024 MiB per replica)."""
    from envkit.scaffold import init_project

    parent = tmp_path_factory.mktemp("capacity")
    return init_project("guess-env", template="guess", output_dir=parent, lock=False).path


def test_text_names_n_c_the_source_and_the_commands(cli, guess: Path) -> None:
    result = cli("capacity", "--sessions", "64", guess)
    assert result.exit_code == 0, result.output
    out = result.stdout
    # ceil(64 x 1.1 / 16) = ceil(4.4) = 5
    assert "5 replicas x 16 sessions (MAX_CONCURRENT_ENVS) = 80 concurrent sessions" in out
    assert "16 sessions (server/app.py:" in out
    assert f"envkit run --docker --replicas 5 {guess}" in out
    assert f"envkit deploy k8s --image REF --replicas 5 {guess}" in out
    assert f"envkit deploy ray --replicas 5 {guess}" in out
    assert "size a Kubernetes pool with --headroom 0.25" in out


def test_json_with_an_override_headroom_and_node(cli, guess: Path) -> None:
    result = cli(
        "capacity", "-s", "64", guess, "-e", "MAX_CONCURRENT_ENVS=8", "--headroom", "0",
        "--node-cpu", "8", "--node-memory-mb", "4096", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["per_replica"], data["replicas"], data["total"]) == (8, 8, 64)
    # 8 cores / 1 core = 8, 4096 MiB / 1024 MiB = 4: memory is the tighter; 8 replicas -> 2 nodes
    assert (data["per_node"], data["nodes"]) == (4, 2)
    assert data["capacity_source"] == "-e MAX_CONCURRENT_ENVS=8"
    assert "-e MAX_CONCURRENT_ENVS=8" in data["commands"]["docker"]
    assert data["commands"]["ray"] == f"envkit deploy ray --replicas 8 {guess}"


def test_the_current_directory_is_left_out_of_the_commands(cli, guess: Path, monkeypatch) -> None:
    monkeypatch.chdir(guess)
    result = cli("capacity", "-s", "16", "--headroom", "0", "-f", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["commands"]["docker"] == "envkit run --docker --replicas 1"


def test_refuses_an_environment_without_concurrent_sessions(cli, guess: Path, copy_env) -> None:
    env = copy_env(guess)
    (env / "server" / "app.py").write_text(APP_WITHOUT_CAPACITY)
    result = cli("capacity", "-s", "10", env)
    assert result.exit_code == 2
    assert "does not support concurrent sessions" in result.output
    assert "Traceback" not in result.output


def test_refuses_a_directory_without_a_manifest(cli, tmp_path: Path) -> None:
    result = cli("capacity", "-s", "10", tmp_path)
    assert result.exit_code == 2
    assert "openenv.yaml" in result.output


def test_the_installed_command_exits_2_without_a_traceback(guess: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "envkit", "capacity", "-s", "4", str(guess), "-e",
         "MAX_CONCURRENT_ENVS=1"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "accepts 1 session" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
