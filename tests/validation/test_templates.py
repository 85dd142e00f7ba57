"""envkit's own template is clean; a fresh `openenv init` (OpenEnv 0.10) environment shows the
known upstream defects (docs/protocol.md, "Known upstream defects": 0.10 caps the reward at 1.0
and honours `episode_id`; `done` is never true, and the reward pays verbosity; `reset()` still
drops `seed`, which is no defect while the template draws nothing at random, issue #13)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from envkit.envdir import EnvDir
from envkit.validation.options import RunOptions
from envkit.validation.runtime import RuntimeTarget, run_runtime
from tests.helpers import descendants


def test_echo_template_has_zero_findings(echo_env: Path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = descendants(os.getpid())
    out = run_runtime(RuntimeTarget(url=None, envdir=EnvDir(echo_env), python=sys.executable))
    assert out.findings == [], [(f.code, f.message) for f in out.findings]
    # every runtime rule was evaluated (EK422/EK423 only fire on a hang or a crash)
    from envkit.findings import Stage, codes_of
    from envkit.validation.rules import lane_only_codes

    expected = set(codes_of(Stage.RUNTIME)) - {"EK422", "EK423"} - set(lane_only_codes("source"))
    assert expected <= set(out.checks_run)
    assert descendants(os.getpid()) <= before
    assert not (tmp_path / ".hypothesis").exists()  # nothing written where envkit runs


@pytest.fixture(scope="module")
def openenv_init_env(tmp_path_factory) -> Path:
    parent = tmp_path_factory.mktemp("oi")
    openenv = Path(sys.executable).parent / "openenv"
    subprocess.run(
        [str(openenv), "init", "oi_env"], cwd=parent, check=True, capture_output=True, timeout=180
    )
    return parent / "oi_env"


def test_openenv_init_env_shows_upstream_defects(openenv_init_env: Path):
    out = run_runtime(
        RuntimeTarget(
            url=None,
            envdir=EnvDir(openenv_init_env),
            python=sys.executable,
        ),
        RunOptions(episodes=2),
    )
    by_code = {f.code: f for f in out.findings}
    # `reset()` drops `seed`, but the template draws nothing at random: no EK413 (issue #13)
    assert set(by_code) == {"EK414", "EK505", "EK507"}, [(f.code, f.message) for f in out.findings]
    assert "EK413" in out.checks_run
    assert "50 steps" in by_code["EK414"].message
