"""`envkit eval --url A --url B`: sessions spread round-robin over several servers (replicas,
Spaces), each a real uvicorn with room for 2 sessions; a CAPACITY_REACHED refusal is retried
(a new connection may land on a freed slot or another replica) before it caps concurrency."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator

import pytest

ACCEPTED = '"WebSocket /ws" [accepted]'  # uvicorn's line for each WebSocket it accepts


def _accepted(server) -> int:
    return server.log_tail(100_000).count(ACCEPTED)


@pytest.fixture(scope="module")
def replicas(echo_env) -> Iterator[list]:
    """Two servers of the echo environment, MAX_CONCURRENT_ENVS=2 each."""
    from envkit.envdir.manifest import read_manifest
    from envkit.server import start_server

    app = read_manifest(echo_env).app
    servers = []
    try:
        for _ in range(2):
            servers.append(
                start_server(echo_env, app, python=sys.executable, env={"MAX_CONCURRENT_ENVS": "2"})
            )
        for server in servers:
            server.wait_healthy(timeout_s=90)
        yield servers
    finally:
        for server in servers:
            server.stop()


@pytest.mark.slow
def test_sessions_spread_over_two_urls(cli, replicas, tmp_path):
    a, b = replicas
    before = [_accepted(a), _accepted(b)]
    r = cli(
        "eval", "--url", a.url, "--url", b.url, "--policy", "random", "-n", "8", "-c", "4",
        "--format", "json", "--out", tmp_path / "run",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["episodes"] == 8 and s["episode_errors"] == 0
    # 4 sessions at once: more than either server holds, so both were used.
    assert s["settings"]["concurrency"] == 4 and s["environment"]["capacity"] is None
    assert s["environment"]["urls"] == [a.url, b.url]
    assert not any("capped" in n for n in s["notes"]), s["notes"]
    time.sleep(0.3)  # the servers' log lines arrive through a pipe
    assert _accepted(a) - before[0] >= 2 and _accepted(b) - before[1] >= 2
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["environment"]["urls"] == [a.url, b.url]  # --resume uses both again


@pytest.mark.slow
def test_one_full_url_caps_concurrency_and_names_replicas(replicas, tmp_path):
    from envkit.evaluation import evaluate

    notes: list[str] = []
    result = evaluate(
        url=replicas[0].url, policy="random", episodes=4, concurrency=4, on_note=notes.append
    )
    assert result.summary["settings"]["concurrency"] == 2
    assert result.summary["episode_errors"] == 0
    capped = [n for n in notes if "capped to 2" in n]
    assert capped and "also after 3 retries" in capped[0]
    assert "add replicas (`envkit run --docker --replicas N`)" in capped[0]


@pytest.mark.slow
def test_capacity_reached_is_retried_until_a_slot_frees(replicas):
    """Both slots of the server are held; one is released 0.4 s later. Without the retry the
    run fails at once with CAPACITY_REACHED; with it, it plays."""
    from envkit.evaluation import evaluate
    from envkit.wire import EnvSession

    url = replicas[1].url
    held = [EnvSession(url), EnvSession(url)]
    for session in held:
        session.reset(seed=0)  # the slots are really taken
    release = threading.Timer(0.4, held[0].close)
    release.start()
    try:
        result = evaluate(url=url, policy="random", episodes=2, concurrency=1)
    finally:
        release.cancel()
        for session in held:
            session.close()
    assert result.summary["episodes"] == 2 and result.summary["episode_errors"] == 0
