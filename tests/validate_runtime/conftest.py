"""Fixtures of the runtime-stage tests: the knobs environment served once per module in URL
mode (its misbehaviour switched through a mode file, so one server start serves many rules)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

KNOBS = Path(__file__).parent / "envs" / "knobs"


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
