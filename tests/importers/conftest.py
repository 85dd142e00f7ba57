"""Fixtures for `envkit import`: each imported environment locked, installed into a venv
(its locked dependencies from a venv cached across runs, `tests.helpers.cached_venv`; the
environment itself editable on top), once per session."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import cached_venv, layered_venv

FIXTURES = Path(__file__).parent / "fixtures"
# Two more tasks than leg_counting, with other kinds of answer: a number (possibly negative,
# from an expression) and a colour word. (word_sorting gets EK516: its check is case-sensitive.)
RG_TASKS = ("leg_counting", "basic_arithmetic", "color_cube_rotation")


@dataclass(frozen=True)
class ImportedEnv:
    """An imported environment with its venv."""

    source: str
    path: Path
    python: str


def _uv() -> str:
    from envkit.scaffold import uv_binary

    uv = uv_binary()
    assert uv, "uv is required (declared dependency of rl-envkit)"
    return uv


def build_imported(parent: Path, source: str, name: str) -> ImportedEnv:
    """`envkit import SOURCE NAME` (with `uv lock`), then the environment's venv, as
    tests/templates/conftest.py `build_env` does for templates."""
    from envkit.importers import import_environment

    result = import_environment(source, name, output_dir=parent)
    assert result.lock.status == "written", result.lock.message
    uv = _uv()
    deps = subprocess.run(
        [
            uv,
            "export",
            "-q",
            "--frozen",
            "--no-emit-project",
            "--no-hashes",
            "--no-header",
            "--format",
            "requirements-txt",
        ],
        cwd=result.path,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    base = cached_venv(deps + "pytest\n")
    python = layered_venv(result.path / ".venv", base)
    subprocess.run(
        [uv, "pip", "install", "-q", "--no-deps", "--python", python, "-e", str(result.path)],
        check=True,
        timeout=600,
    )
    return ImportedEnv(source, result.path, python)


@pytest.fixture(scope="session")
def imported_envs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ImportedEnv]:
    """The three reasoning-gym tasks and the verifiers fixture module, imported and installed
    once per session; keyed by source."""
    parent = tmp_path_factory.mktemp("imported")
    sources = {f"reasoning-gym:{t}": t.replace("_", "-") for t in RG_TASKS}
    sources[str(FIXTURES / "vf_single.py")] = "vf-single"
    sources[str(FIXTURES / "vf_multi.py")] = "vf-multi"
    return {src: build_imported(parent, src, name) for src, name in sources.items()}
