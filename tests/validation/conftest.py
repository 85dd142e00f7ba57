"""Fixtures of the validation tests: a clean echo environment to mutate, an `openenv init` one,
and the knobs environment served once in URL mode (its misbehaviour switched through a mode
file, so one server start serves many runtime rules)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

KNOBS = Path(__file__).parent / "envs" / "knobs"

# The record `envkit init` writes after the README's front matter (envkit.scaffold, EK224).
RECORD = re.compile(r"<!-- envkit:template .*?-->\n\n", re.DOTALL)


@pytest.fixture
def clean_env(echo_env: Path, copy_env, echo_lock: str) -> Path:
    """A private copy of the generated echo environment plus a uv.lock: zero static findings.

    The lock is real, so EK210 and EK222 pass. The README has no `envkit:template` record
    (as if it had been rewritten for the environment), so a fixture that changes `models.py`
    or the environment module shows its own rule alone, not EK224 as well (EK224 has a
    fixture of its own)."""
    root = copy_env(echo_env)
    (root / "uv.lock").write_text(echo_lock)
    readme = root / "README.md"
    readme.write_text(RECORD.sub("", readme.read_text(), count=1))
    return root


@pytest.fixture(scope="session")
def openenv_init_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An environment made by OpenEnv's own `openenv init` (0.10, the test extra; unchanged)."""
    parent = tmp_path_factory.mktemp("openenv-init")
    exe = Path(sys.executable).with_name("openenv")
    subprocess.run(
        [str(exe), "init", "my_env"],
        cwd=parent,
        check=True,
        capture_output=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    root = parent / "my_env"
    # `openenv init` locks when uv can reach an index, and not otherwise: the tests see
    # the files it always writes
    (root / "uv.lock").unlink(missing_ok=True)
    for cache in root.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    return root


@pytest.fixture(scope="session")
def knobs_dir() -> Path:
    return KNOBS


def serve_knobs(tmp: Path, **env: str):
    """Start the knobs server with a mode file; returns (server, mode_file)."""
    from envkit.server import start_server

    mode_file = tmp / "mode"
    mode_file.write_text("")
    server = start_server(
        KNOBS,
        "server.app:app",
        python=sys.executable,
        env={"KNOBS_MODE_FILE": str(mode_file), **env},
    )
    try:
        server.wait_healthy(timeout_s=120)
    except BaseException:
        server.stop()
        raise
    return server, mode_file


@pytest.fixture(scope="session")
def knobs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    server, mode_file = serve_knobs(tmp_path_factory.mktemp("knobs"))
    try:
        yield server, mode_file
    finally:
        server.stop(grace_s=1)
