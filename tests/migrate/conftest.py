"""Fixtures for `envkit migrate` (issue #11, item 5): the six templates as the previous envkit
release rendered them (kept under fixtures/legacy: `envkit init --no-lock --no-skills` at
b141ea8), and OpenEnv's own `openenv init` output from both distributions, made at test time in
their own venvs (the two distributions install the same packages and cannot share one)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import cached_venv

LEGACY = Path(__file__).parent / "fixtures" / "legacy"
LEGACY_TEMPLATES = ("echo", "guess", "rlvr", "tools", "gymnasium", "code")


@pytest.fixture(scope="session")
def openenv010_bin() -> Path:
    """bin/ of a venv with `openenv` 0.10 (its CLI: `openenv validate`, `openenv init`),
    cached across runs and shared by xdist workers (`tests.helpers.cached_venv`)."""
    return cached_venv("openenv==0.10.0\n") / "bin"


@pytest.fixture(scope="session")
def openenv_core030_bin() -> Path:
    """bin/ of a venv with the superseded `openenv-core` 0.3.0 (for its `openenv init`),
    cached like `openenv010_bin`."""
    return cached_venv("openenv-core==0.3.0\n") / "bin"


def openenv_init(bin_dir: Path, parent: Path, name: str) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [str(bin_dir / "openenv"), "init", name],
        cwd=parent,
        check=True,
        timeout=300,
        capture_output=True,
    )
    return parent / name


@pytest.fixture
def legacy_copy(tmp_path: Path):
    """Copy one legacy rendering into a private temp dir: ``legacy_copy("echo")``."""

    def _copy(template: str) -> Path:
        dst = tmp_path / f"legacy_{template}"
        shutil.copytree(LEGACY / f"legacy_{template}", dst)
        return dst

    return _copy
