"""Shared fixtures. Real parts only: real uvicorn servers on 127.0.0.1, a real Docker engine,
OpenEnv's real client (openenv 0.10, the test extra). Fixtures for one area live in that area's own conftest.py."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.helpers import docker_available

_REAL_HOME = Path.home()


@pytest.fixture(autouse=True)
def _isolate(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME, HF_HOME and caches in a temp dir; stable terminal; uv keeps the real cache so
    environment venvs install in seconds."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv(
        "UV_CACHE_DIR", os.environ.get("UV_CACHE_DIR", str(_REAL_HOME / ".cache" / "uv"))
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HF_HOME", str(home / ".cache" / "huggingface"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("ENVKIT_DEBUG", raising=False)


class Cli:
    """Runs the real typer app in-process, like a user would from a shell."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None, env: dict | None = None):
        from envkit.cli import app

        return self.runner.invoke(
            app, [str(a) for a in args], input=input, env=env, catch_exceptions=False
        )


@pytest.fixture
def cli() -> Cli:
    return Cli()


@pytest.fixture(scope="session")
def echo_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A freshly generated echo environment (no uv.lock), shared by the session. Tests must
    not modify it: copy it first (`copy_env`)."""
    from envkit.scaffold import init_project

    parent = tmp_path_factory.mktemp("envs")
    return init_project("echo-env", output_dir=parent, lock=False).path


@pytest.fixture
def copy_env(tmp_path: Path):
    """Copy a generated environment to a private temp dir: `copy_env(echo_env)`."""

    def _copy(src: Path, name: str | None = None) -> Path:
        dst = tmp_path / (name or src.name)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", ".venv"))
        return dst

    return _copy


@pytest.fixture(scope="session")
def echo_server(echo_env: Path) -> Iterator:
    """The echo environment served by uvicorn on 127.0.0.1 with the test interpreter (which
    has openenv). Stopped, with its process group, at the end of the session."""
    from envkit.manifest import read_manifest
    from envkit.server import start_server

    server = start_server(echo_env, read_manifest(echo_env).app, python=sys.executable)
    try:
        server.wait_healthy(timeout_s=90)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def docker_engine() -> None:
    """Require a Docker engine. Under CI=true a missing engine FAILS the test (never skips)."""
    ok, why = docker_available()
    if not ok:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"Docker engine required under CI=true but not reachable: {why}")
        pytest.skip(f"Docker engine not reachable: {why}")
