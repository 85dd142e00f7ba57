"""`envkit eval` against a server that hangs in `reset` or `step` (issue #12, defect 5): the run
ends within a bound with a clear cause, writes what it has, and leaves no process behind.

Bounds exclude the server's start-up (seconds to a minute on a loaded CI machine)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from envkit.evaluation import EvalAbortedError, evaluate
from envkit.server import start_server
from tests.helpers import descendants

HOSTILE = Path(__file__).parent / "envs" / "hostile"


def test_hanging_reset_stops_after_three_lost_episodes(monkeypatch, tmp_path):
    monkeypatch.setenv("HOSTILE_MODE", "hang_reset")
    before = descendants(os.getpid())
    t0 = time.monotonic()
    with pytest.raises(EvalAbortedError) as info:
        evaluate(HOSTILE, policy="random", python=sys.executable, episodes=20, out_dir=tmp_path)
    elapsed = time.monotonic() - t0
    time.sleep(0.2)
    assert descendants(os.getpid()) <= before, "eval left processes behind"
    err = info.value
    assert "Stopped after 3 lost episodes in a row" in err.message
    # step_timeout_s 0.5 in openenv.yaml -> reply timeout max(2, 2 x 0.5) = 2 s
    assert "`reset(seed=" in err.message and "within 2 s" in err.message
    summary = json.loads((tmp_path / "summary.json").read_text())
    # 3 x 2 s of waiting plus the stop; before the fix: 60 s per episode, all 20 played
    assert elapsed - summary["timings"]["server_start_s"] < 25, elapsed
    lines = (tmp_path / "trajectories.jsonl").read_text().splitlines()
    # a reply that never came is not retried (it would cost the wait again): lost at once
    assert len(lines) == 3 and all(json.loads(x)["lost"] for x in lines)
    assert all("session lost" in json.loads(x)["error"] for x in lines)
    assert summary["complete"] is False and "lost episodes" in summary["aborted"]
    assert summary["lost_episodes"] == 3 and summary["episodes"] == 0
    assert summary["settings"]["reply_timeout_s"] == 2.0


def test_hanging_step_is_cut_by_the_whole_run_budget(tmp_path):
    server = start_server(
        HOSTILE, "server.app:app", python=sys.executable, env={"HOSTILE_MODE": "hang_step"}
    )
    try:
        server.wait_healthy(timeout_s=180)
        t0 = time.monotonic()
        with pytest.raises(EvalAbortedError) as info:  # only --timeout can end this run
            evaluate(
                HOSTILE,
                url=server.url,
                policy="random",
                episodes=5,
                timeout_s=5,
                reply_timeout_s=300,
                out_dir=tmp_path,
            )
        elapsed = time.monotonic() - t0
    finally:
        server.stop(grace_s=1)
    assert "exceeded --timeout 5 s" in info.value.message
    assert elapsed < 5 + 10, elapsed
    summary = json.loads((tmp_path / "summary.json").read_text())
    # the per-reply limit is capped by the budget (5 s), so the hung episode may be recorded as
    # lost just before the budget ends the run: either way no step was ever answered
    assert summary["settings"]["timeout_s"] == 5 and summary["steps"] == 0
    assert summary["episodes"] == summary["episode_errors"] <= 1


def test_cli_exit_code_and_one_line_cause(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("HOSTILE_MODE", "hang_reset")
    before = descendants(os.getpid())
    result = cli(
        "eval",
        HOSTILE,
        "--policy",
        "random",
        "--python",
        sys.executable,
        "--reply-timeout",
        "1",
        "--out",
        tmp_path / "out",
    )
    assert result.exit_code == 2
    assert "error: Stopped after 3 lost episodes in a row" in result.stderr
    assert "within 1 s" in result.stderr
    time.sleep(0.2)
    assert descendants(os.getpid()) <= before
