"""Fixtures of the safety tests: the clean echo environment (zero static findings)."""

from __future__ import annotations

from pathlib import Path

import pytest

PLACEHOLDER_LOCK = 'version = 1\nrequires-python = ">=3.11"\n'


@pytest.fixture
def clean_env(echo_env: Path, copy_env) -> Path:
    """A private copy of the generated echo environment plus a uv.lock: zero static findings."""
    root = copy_env(echo_env)
    (root / "uv.lock").write_text(PLACEHOLDER_LOCK)
    return root
