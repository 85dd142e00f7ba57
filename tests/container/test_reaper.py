"""The reaper program (envkit/programs/reaper.py) on its own, against a real Docker engine
and real processes: at end of file it removes what carries its token, and only that."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import pytest

from envkit import programs
from envkit.reaper import OWNER_LABEL, OWNER_VAR
from tests.container._util import containers_with
from tests.helpers import process_alive

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("docker_engine")]

BASE_IMAGE = "python:3.11-slim"  # the local base image (.ci/docker-setup.sh)


def _sleeper(token: str) -> subprocess.Popen[bytes]:
    """A process in its own session marked with ``token``, as envkit's children are."""
    return subprocess.Popen(
        ["sleep", "300"], env={**os.environ, OWNER_VAR: token}, start_new_session=True
    )


def test_the_reaper_removes_what_carries_its_token_and_nothing_else(dclient, labels, run_id):
    mine, other = uuid.uuid4().hex, uuid.uuid4().hex
    owned = _sleeper(mine)
    foreign = _sleeper(other)
    for token, case in ((mine, "mine"), (other, "other")):
        dclient.containers.create(
            BASE_IMAGE, ["sleep", "300"], labels={**labels, OWNER_LABEL: token, "c": case}
        )
    network = dclient.networks.create(
        f"envkit-reaper-test-{run_id}", labels={**labels, OWNER_LABEL: mine}
    )
    reaper = subprocess.Popen(
        [sys.executable, "-I", str(programs.path("reaper")), mine], stdin=subprocess.PIPE
    )
    try:
        assert reaper.stdin is not None
        reaper.stdin.write(b"containers\n")
        reaper.stdin.flush()
        assert process_alive(owned.pid), "the reaper acted before end of file"
        reaper.stdin.close()  # what envkit's exit does
        assert reaper.wait(timeout=30) == 0
        owned.wait(timeout=5)  # reaped by its parent, this test
        assert owned.returncode == -signal.SIGTERM
        assert process_alive(foreign.pid)
        left = {c.labels["c"] for c in containers_with(dclient, run_id) if "c" in c.labels}
        assert left == {"other"}
        assert not dclient.networks.list(ids=[network.id])
    finally:
        for proc in (owned, foreign, reaper):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for c in containers_with(dclient, run_id):
            if "c" in c.labels:
                c.remove(force=True)
        for net in dclient.networks.list(ids=[network.id]):
            net.remove()
