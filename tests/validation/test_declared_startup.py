"""EK447: when the manifest's command exits and envkit serves the environment another way, the
environment still fails where it is started as declared (a Space, ``openenv``): envkit
validates it, and warns with the declared command, its error and the way it used instead."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from envkit.envdir import EnvDir
from envkit.envdir.launch import LaunchCandidate, root_cause
from envkit.server import Attempt
from envkit.validation.engine import ServerPlayer, Settings
from envkit.validation.options import RunOptions
from envkit.validation.rules.liveness import DECLARED_START_FAILS, declared_start
from envkit.validation.runtime import RuntimeTarget, run_runtime
from tests.helpers import descendants

DECLARED = Path(__file__).parent / "envs" / "declared_relative"


def test_relative_imports_validate_by_the_package_form_and_warn_ek447() -> None:
    before = descendants(os.getpid())
    out = run_runtime(
        RuntimeTarget(url=None, envdir=EnvDir(DECLARED), python=sys.executable),
        RunOptions(episodes=1),
    )
    time.sleep(0.2)
    assert descendants(os.getpid()) <= before, "the runtime stage left processes behind"
    # otherwise clean: validated as started by the package form (and a quiz no weak policy
    # of envkit solves: EK523, info)
    codes = [f.code for f in out.findings]
    assert codes == ["EK447", "EK523"], [(f.code, f.message) for f in out.findings]
    f = out.findings[0]
    assert f.severity.value == "warning"
    assert f.data["declared"] == f"uvicorn server.app:app in {DECLARED.resolve()}"
    assert f.data["error"] == "ImportError: attempted relative import beyond top-level package"
    assert f.data["exit_code"] not in (None, 0)
    assert f.data["launch"].startswith(
        "package form from the parent folder: uvicorn declared_relative.server.app:app"
    )
    for part in ("Spaces and `openenv`", f"`{f.data['declared']}`", f.data["error"]):
        assert part in f.message, (part, f.message)
    assert f.message.endswith(f"started with the {f.data['launch']} instead.")


def _engine() -> ServerPlayer:
    engine = ServerPlayer(Settings.resolve(None, RunOptions(episodes=1, seed=0)))
    engine.launch = "package form from the parent folder: uvicorn x_env.server.app:app in /e"
    return engine


def _attempt(kind: str, log: str) -> Attempt:
    cand = LaunchCandidate(kind=kind, label=kind, app="server.app:app", cwd=Path("/e/x_env"))
    return Attempt(cand, "uvicorn server.app:app in /e/x_env", 3, log, root_cause(log))


def test_without_a_traceback_the_last_line_of_the_output_is_the_error() -> None:
    engine = _engine()
    declared_start(engine, _attempt("manifest", "INFO: loading\nboot: port file missing\n\n"))
    (f,) = engine.findings
    assert f.code == DECLARED_START_FAILS.code and f.data["error"] == "boot: port file missing"
    assert "exited with code 3: `boot: port file missing`" in f.message


def test_a_fallback_that_exited_first_is_not_the_declared_command() -> None:
    engine = _engine()
    declared_start(engine, _attempt("package", "ImportError: x\n"))
    assert engine.findings == []
