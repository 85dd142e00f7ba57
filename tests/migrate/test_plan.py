"""`envkit migrate` re-records the probe plan that `validation.execution` declares when it is
missing or stale, as EK121 and EK431 tell the user to do; `--no-probe-plan` leaves it alone."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from envkit.migrate import migrate

PLAN = "validation/runtime.json"


@pytest.fixture
def env(echo_env: Path, copy_env) -> Path:
    root = copy_env(echo_env)
    assert (root / PLAN).is_file()  # the template ships the oracle's plan
    return root


def _actions(root: Path) -> list[dict]:
    return json.loads((root / PLAN).read_text())["actions"]


def test_deleted_plan_is_re_recorded(env: Path, cli) -> None:
    (env / PLAN).unlink()
    res = cli("migrate", env, "--python", sys.executable)
    assert res.exit_code == 0, res.output
    assert (env / PLAN).is_file()
    assert "re-recorded (missing)" in res.output
    assert "Already current" not in res.output
    assert _actions(env) and "message" in _actions(env)[0]


def test_stale_plan_is_re_recorded(env: Path) -> None:
    """A plan recorded before the action field was renamed: the environment refuses its
    first action, so migrate plays the oracle again."""
    plan = json.loads((env / PLAN).read_text())
    plan["actions"] = [{"text": a.get("message", "x")} for a in plan["actions"]]
    (env / PLAN).write_text(json.dumps(plan))
    result = migrate(env, python=sys.executable)
    [change] = result.changes
    assert change.path == PLAN and change.before is not None
    assert "re-recorded (stale: the environment refused its action 1" in change.summary[0]
    assert "message" in _actions(env)[0]


def test_current_plan_is_kept(env: Path) -> None:
    before = (env / PLAN).read_text()
    assert migrate(env, python=sys.executable).changes == []
    assert (env / PLAN).read_text() == before


def test_no_probe_plan_only_notes_the_missing_plan(env: Path, cli) -> None:
    (env / PLAN).unlink()
    res = cli("migrate", env, "--no-probe-plan")
    assert res.exit_code == 0, res.output
    assert not (env / PLAN).exists()
    assert "validation/runtime.json is missing" in res.output
