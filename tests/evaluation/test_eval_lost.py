"""Lost sessions and oversized observations in `envkit eval`, against real servers on
127.0.0.1: a server that closes the WebSocket mid-episode (tests/evaluation/flaky_server.py),
a replica whose process is killed mid-run, one that answers a 10 MB observation.

A session lost mid-episode is played again from reset on a fresh session; an episode still
lost after --session-retries is *lost*: reported apart from the returns, and `--resume`
plays it again."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading

import pytest

from envkit.evaluation import evaluate


def _traj(out) -> list[dict]:
    return [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]


def test_a_dropped_session_is_played_again_on_a_fresh_one(flaky_server, tmp_path):
    flaky_server.knobs.drop_after, flaky_server.knobs.drops_left = 1, 1
    result = evaluate(url=flaky_server.url, policy="random", episodes=4, out_dir=tmp_path)
    s = result.summary
    assert s["episodes"] == 4 and s["lost_episodes"] == 0 and s["complete"] is True
    assert s["success_rate"] == 1.0 and s["return"]["min"] == 1.0
    assert s["episode_errors"] == 0 and result.exit_code == 0
    assert any("1 episode(s) lost their session and were played again" in n for n in s["notes"])
    assert flaky_server.knobs.sessions == 2  # the first, and the fresh one after the drop
    assert [e["steps_taken"] for e in _traj(tmp_path)] == [3, 3, 3, 3]
    # the episode played again is marked; the others carry no `retries`
    assert [e.get("retries") for e in _traj(tmp_path)] == [1, None, None, None]
    assert [e.retries for e in result.episodes] == [1, 0, 0, 0]
    assert s["replayed_episodes"] == 1


def test_a_replayed_episode_is_marked_in_the_text(cli, flaky_server, tmp_path):
    flaky_server.knobs.drop_after, flaky_server.knobs.drops_left = 1, 2  # two lost sessions
    r = cli("eval", "--url", flaky_server.url, "--policy", "random", "-n", "2", "--out", tmp_path)
    assert r.exit_code == 0, r.output
    assert (
        "episode 1/2  seed 0  return 1.000  steps 3  success  (replayed after 2 lost sessions)"
        in r.stderr
    )
    assert "episode 2/2  seed 1  return 1.000  steps 3  success" in r.stderr.splitlines()
    assert (
        "replayed      1 episode(s) played again from reset after a lost session; the last "
        'play counts ("retries" in trajectories.jsonl)'
    ) in r.stdout
    assert [e.get("retries") for e in _traj(tmp_path)] == [2, None]


def test_lost_after_the_retries_is_reported_apart_and_resume_plays_it(cli, flaky_server, tmp_path):
    knobs = flaky_server.knobs
    knobs.drop_after, knobs.drops_left = 2, 3  # episode 0: first play and both retries
    out = tmp_path / "run"
    r = cli("eval", "--url", flaky_server.url, "--policy", "random", "-n", "4", "--out", out)
    assert r.exit_code == 1, r.output
    assert "lost          1 episode(s): their session was lost" in r.stdout
    assert f"resume        envkit eval --resume {out}" in r.stdout
    assert "return        mean 1.000  std 0.000  min 1.000" in r.stdout  # not a return of 0
    assert "success       100.0%" in r.stdout
    s = json.loads((out / "summary.json").read_text())
    assert s["episodes"] == 3 and s["lost_episodes"] == 1 and s["complete"] is False
    assert s["return"]["n"] == 3 and s["episode_errors"] == 0
    assert s["settings"]["session_retries"] == 2
    lost = [e for e in _traj(out) if e.get("lost")]
    assert [e["episode"] for e in lost] == [0]
    assert "session lost: `step` 3 of seed 0" in lost[0]["error"]
    assert "also on 2 fresh sessions" in lost[0]["error"]

    r = cli("eval", "--resume", out, "--format", "json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["episodes"] == 4 and s["lost_episodes"] == 0 and s["complete"] is True
    assert s["settings"]["concurrency"] == 1
    assert any("3 finished episode(s) kept, 1 to play" in n for n in s["notes"]), s["notes"]
    assert [e.get("lost", False) for e in _traj(out)] == [False] * 4


def test_without_retries_the_dropped_episode_is_lost_at_once(flaky_server, tmp_path):
    flaky_server.knobs.drop_after, flaky_server.knobs.drops_left = 0, 1
    result = evaluate(
        url=flaky_server.url, policy="random", episodes=2, session_retries=0, out_dir=tmp_path
    )
    assert [e.episode for e in result.lost] == [0] and len(result.episodes) == 1
    assert result.summary["lost_episodes"] == 1 and result.exit_code == 1
    assert result.summary["pass_at_k"]["mean"] == {"1": 1.0}  # over the played group only


def test_a_huge_observation_ends_the_episode_with_a_named_error(cli, flaky_server, tmp_path):
    flaky_server.knobs.big_observation_bytes = 10_000_000
    out = tmp_path / "run"
    r = cli(
        "eval", "--url", flaky_server.url, "--policy", "random", "-n", "2", "--format", "json",
        "--out", out,
    )  # fmt: skip
    assert r.exit_code == 1, r.output
    s = json.loads(r.stdout)
    assert s["episode_errors"] == 2 and s["lost_episodes"] == 0
    for e in _traj(out):
        assert e["error"].startswith("step failed: OBSERVATION_TOO_LARGE: the observation is 9.5")
        assert "over eval's limit of 4 MiB" in e["error"]
        assert e["steps_taken"] == 1 and e["steps"][0]["observation"] is None
    assert (out / "trajectories.jsonl").stat().st_size < 100_000  # the blob was not kept


@pytest.mark.slow  # starts two servers of the echo environment
def test_a_replica_killed_mid_run_costs_no_episode(echo_env, tmp_path):
    from envkit.envdir.manifest import read_manifest
    from envkit.server import start_server

    app = read_manifest(echo_env).app
    servers = [start_server(echo_env, app, python=sys.executable) for _ in range(2)]
    killed = threading.Event()

    def kill_a(record, finished, total):
        if finished >= 6 and not killed.is_set():
            killed.set()
            os.killpg(servers[0].popen.pid, signal.SIGKILL)

    try:
        for server in servers:
            server.wait_healthy(timeout_s=90)
        result = evaluate(
            url=[s.url for s in servers],
            policy="random",
            episodes=40,
            concurrency=4,
            out_dir=tmp_path,
            on_episode=kill_a,
        )
    finally:
        for server in servers:
            server.stop()
    assert killed.is_set()
    s = result.summary
    assert s["episodes"] == 40 and s["lost_episodes"] == 0 and s["complete"] is True
    assert s["episode_errors"] == 0 and result.exit_code == 0
    retried = [n for n in s["notes"] if "lost their session and were played again" in n]
    assert retried, s["notes"]  # the sessions on the killed replica were lost, then replayed
