"""Children of the environment's interpreter keep their bytecode in envkit's cache
(``PYTHONPYCACHEPREFIX``): reused by the next server start, never written next to the
environment's sources."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envkit.scaffold import init_project
from envkit.server import bytecode_env, start_server


def test_the_cache_prefix_unless_the_user_chose(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert bytecode_env({}) == {"PYTHONPYCACHEPREFIX": str(tmp_path / "envkit" / "pycache")}
    assert bytecode_env({"PYTHONDONTWRITEBYTECODE": "1"}) == {}
    assert bytecode_env({"PYTHONPYCACHEPREFIX": "/elsewhere"}) == {}


def test_without_a_writable_cache_nothing_is_written(tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file: no directory under it
    assert bytecode_env({}) == {"PYTHONDONTWRITEBYTECODE": "1"}


@pytest.mark.slow
def test_a_server_start_caches_bytecode_outside_the_environment(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)  # the suite's shared one
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    env = init_project("bc-env", template="echo", output_dir=tmp_path, lock=False).path
    server = start_server(env, "server.app:app", python=sys.executable)
    try:
        server.wait_healthy(timeout_s=120)
    finally:
        server.stop()
    assert list(env.rglob("__pycache__")) == []
    prefix = tmp_path / "cache" / "envkit" / "pycache"
    cached = {p.name.split(".")[0] for p in prefix.rglob("*.pyc")}
    assert {"app", "bc_env_environment"} <= cached, sorted(cached)[:20]
