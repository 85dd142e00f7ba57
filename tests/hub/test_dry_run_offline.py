"""`envkit push --dry-run` with a token but no reachable Hub: the offline plan, exit 0, fast.

Real `envkit` subprocesses; the "Hub" is a closed port on 127.0.0.1, or a socket that
accepts connections and never answers.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from envkit.hub.plan import PushOptions, plan_push
from envkit.hub.space import HUB_PROBE_TIMEOUT_S, hub_unreachable

ENVKIT = str(Path(sys.executable).parent / "envkit")
TOKEN = "hf_offlineDryRunTokenABCDEFGHIJKLMNOP"


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens once the socket is closed


@pytest.fixture
def silent_hub() -> Iterator[str]:
    """An endpoint that accepts TCP connections (the kernel's backlog) and never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


def _push(env_dir: Path, endpoint: str, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_TOKEN=TOKEN, HF_ENDPOINT=endpoint, HF_HOME=str(env_dir.parent / "hf-home"))
    t0 = time.monotonic()
    proc = subprocess.run(
        [ENVKIT, "push", "--dry-run", *args],
        cwd=env_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc, time.monotonic() - t0


def test_closed_port_gives_the_offline_plan(echo_env, copy_env):
    env_dir = copy_env(echo_env)
    endpoint = _closed_port()
    proc, took = _push(env_dir, endpoint)
    assert proc.returncode == 0, proc.stderr
    assert took < 10, took
    assert "Plan (dry run, nothing was sent): <your-namespace>/echo-env" in proc.stdout
    assert "Space unknown: the Hub was not reachable" in proc.stdout
    assert "what changes against the Space: unknown" in proc.stdout
    assert "openenv.yaml" in proc.stdout  # the upload set is still listed
    assert f"Cannot reach the Hugging Face Hub at {endpoint}" in proc.stderr
    assert "made offline" in proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr


def test_offline_plan_as_json_marks_the_unknowns(echo_env, copy_env):
    env_dir = copy_env(echo_env)
    proc, _ = _push(env_dir, _closed_port(), "--repo-id", "alice/echo", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["dry_run"] is True
    assert plan["repo_id"] == "alice/echo"  # given, so known without the Hub
    assert plan["created"] is None
    assert "Cannot reach the Hugging Face Hub" in plan["hub_unreachable"]
    assert {f["path"] for f in plan["files"]} >= {"openenv.yaml", "Dockerfile"}


def test_a_hub_that_never_answers_is_given_up_on_quickly(echo_env, copy_env, silent_hub):
    env_dir = copy_env(echo_env)
    proc, took = _push(env_dir, silent_hub)
    assert proc.returncode == 0, proc.stderr
    assert "Space unknown" in proc.stdout
    assert f"within {HUB_PROBE_TIMEOUT_S:g} s" in proc.stderr
    assert took < HUB_PROBE_TIMEOUT_S + 8, took


def test_probe_says_reachable_for_an_answering_hub(hub):
    # The Hub stand-in answers (any status counts): no offline plan.
    assert hub_unreachable(hub.url) is None


def test_reachable_hub_still_plans_against_the_space(hub, env_copy, space_id, monkeypatch):
    from tests.hubstub import WRITE_TOKEN

    with plan_push(env_copy, PushOptions(repo_id=space_id, token=WRITE_TOKEN, dry_run=True)) as p:
        result = p.to_result()
    assert result.hub_unreachable is None and result.remote_known
    assert result.to_dict()["created"] is True  # the stand-in has no such Space


def test_a_real_push_still_fails_on_an_unreachable_hub(echo_env, copy_env):
    env_dir = copy_env(echo_env)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_TOKEN=TOKEN, HF_ENDPOINT=_closed_port(), HF_HOME=str(env_dir.parent / "hf-home"))
    proc = subprocess.run(
        [ENVKIT, "push", "--repo-id", "alice/echo"],
        cwd=env_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "Cannot reach the Hugging Face Hub" in proc.stderr


def test_a_file_name_that_is_not_utf8_blocks_the_push_without_calling_it_a_secret(
    echo_env, copy_env
):
    env_dir = copy_env(echo_env)
    with open(os.path.join(os.fsencode(env_dir), b"notes-\xff.txt"), "wb") as fh:
        fh.write(b"x")
    proc, _took = _push(env_dir, _closed_port())
    assert proc.returncode == 1, proc.stderr
    assert "files that cannot be uploaded safely (notes-\\xff.txt)" in proc.stderr
    assert "EK607" in proc.stderr
    assert "secrets would be uploaded" not in proc.stderr
