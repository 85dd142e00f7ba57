"""Fixtures of the safety tests: the clean echo environment (zero static findings)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def clean_env(echo_env: Path, copy_env, echo_lock: str) -> Path:
    """A private copy of the generated echo environment plus a uv.lock: zero static findings."""
    root = copy_env(echo_env)
    (root / "uv.lock").write_text(echo_lock)  # a real lock: EK210 and EK222 pass
    return root
