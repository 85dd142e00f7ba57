"""Validate against a server whose every `reset` and `step` answers a 10 MB frame
(tests/validation/envs/flood): it stops at the first one with one finding that names the size
and the limit, as `envkit eval` stops with OBSERVATION_TOO_LARGE, instead of playing its whole
schedule; the checks it could not play are skipped with that reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envkit.envdir.manifest import read_manifest
from envkit.findings import Stage, codes_of
from envkit.validation import rules  # noqa: F401 - registers the rules codes_of lists
from tests.helpers import descendants

pytestmark = pytest.mark.slow

FLOOD = Path(__file__).parent / "envs" / "flood"
AFTER_S = 30.0  # the bound past the declared start-up


def test_validate_stops_at_the_first_observation_over_the_limit(tmp_path: Path) -> None:
    section = read_manifest(FLOOD).envkit
    assert section is not None
    startup_s = section.startup_timeout_s
    before = descendants(os.getpid())
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "envkit", "validate", str(FLOOD), "--python", sys.executable]
        + ["--no-train-path", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=startup_s + AFTER_S + 30,  # past the bound: the assertion below says by how much
        cwd=tmp_path,
    )
    took = time.monotonic() - t0
    assert took < startup_s + AFTER_S, f"{took:.0f} s: {done.stderr[-2000:]}"
    report = json.loads(done.stdout)
    runtime_codes = codes_of(Stage.RUNTIME)
    runtime = [f for f in report["findings"] if f["code"] in runtime_codes]
    assert [f["code"] for f in runtime] == ["EK432"], runtime
    found = runtime[0]["message"]
    assert "`reset(seed=0)`" in found and "9.5 MiB" in found and "at most 4 MiB" in found, found
    checks = {c["code"]: c for c in report["checks"]}
    assert checks["EK432"]["status"] == "failed"
    cut = [c for c in runtime_codes if checks[c]["reason"].endswith("see EK432")]
    assert {"EK411", "EK412", "EK501", "EK503", "EK513"} <= set(cut), checks
    time.sleep(0.2)
    assert descendants(os.getpid()) <= before, "validate left processes behind"
