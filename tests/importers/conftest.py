"""Fixtures for `envkit import`: each imported environment locked, installed into a venv
(its locked dependencies from a venv cached across runs, `tests.helpers.cached_venv`; the
environment itself editable on top), once per session."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import locked_env_venv

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


def build_imported(parent: Path, source: str, name: str) -> ImportedEnv:
    """`envkit import SOURCE NAME` (with `uv lock`), then the environment's venv, as
    tests/templates/conftest.py `build_env` does for templates."""
    from envkit.importers import import_environment

    result = import_environment(source, name, output_dir=parent)
    assert result.lock.status == "written", result.lock.message
    python = locked_env_venv(result.path)
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
