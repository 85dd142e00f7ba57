"""`envkit validate --docker`: one report assembler and one deadline for the whole lane.

Two facts pinned against a real Docker engine: when the container never answers
``GET /health`` every runtime check in the JSON report says so (not that ``--static`` was
given), and ``--timeout`` bounds the whole run, the build included.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.container.test_validate_docker import (
    DECLARE,
    DECLARE_ENVKIT,
    NOTHING,
    RUNTIME,
    _declare,
    _images,
    _leftovers,
    _overlay,
    base_id,
)

pytestmark = [
    pytest.mark.docker,
    pytest.mark.usefixtures("docker_engine"),
    pytest.mark.timeout(900),
]


def test_runtime_checks_say_the_container_never_answered(
    built_echo, dclient, labels, run_id, tmp_path
):
    """`slow_start` (declares a 3 s start-up timeout, serves after 30 s): EK444, and every
    other runtime check is skipped because the container never answered, in `checks[]`."""
    from envkit.container import build_image, validate_docker
    from envkit.validation.report import CONTAINER_NO_HEALTH

    path = _overlay(built_echo, "slow_start", tmp_path)
    tag = f"envkit-test-lane-reasons:{run_id}"
    build_image(path, tag=tag, labels=labels, check=False)
    _declare(path, DECLARE["slow_start"], DECLARE_ENVKIT["slow_start"])
    try:
        report = validate_docker(path, image=tag, select=RUNTIME)
        data = report.to_dict()
    finally:
        dclient.images.remove(tag, force=True)
    assert [f.code for f in report.findings] == ["EK444"], report.findings
    runtime = [c for c in data["checks"] if c["stage"] == "runtime"]
    assert runtime
    for check in runtime:
        if check["code"].startswith("EK44"):
            continue  # the lane's own checks ran (EK445: not `no-network`)
        assert check["status"] == "skipped", check
        assert check["reason"] == CONTAINER_NO_HEALTH, check
        assert "--static" not in check["reason"]
    ek445 = next(c for c in data["checks"] if c["code"] == "EK445")
    assert ek445["reason"] == "declared network is not `no-network`"


def test_timeout_bounds_build_start_and_play(built_echo, dclient, tmp_path):
    """`envkit validate --docker --timeout 25` on an image whose server never answers
    /health finishes within 40 s, the build included: one deadline for the whole run, which
    cuts the 60 s start-up the manifest allows by default."""
    path = _overlay(built_echo, "never_healthy", tmp_path)
    _declare(path, DECLARE["slow_start"])  # `public`: the published port is what is played
    before = _images(dclient)
    t = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "envkit", "validate", "--docker", str(path)]
        + ["--timeout", "25", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        timeout=300,
    )
    elapsed = time.monotonic() - t
    data = json.loads(proc.stdout)
    image = data["target"].rpartition(" @ ")[2]
    try:
        assert proc.returncode == 1, proc.stderr
        assert elapsed < 40, f"took {elapsed:.1f} s"
        assert "EK444" in [f["code"] for f in data["findings"]]
        assert "build" in data["timings"]
    finally:
        dclient.images.remove(image, force=True)
    assert _leftovers(dclient, base_id(built_echo), before, built_echo.path) == NOTHING
