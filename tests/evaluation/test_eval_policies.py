"""random, oracle and module:callable policies on the echo template; concurrency and the
server's capacity."""

import sys
import uuid

import pytest

from envkit.envdir.manifest import read_manifest
from envkit.errors import UsageError
from envkit.evaluation import evaluate
from envkit.server import start_server


def _actions(result):
    return [[s.action for s in e.steps] for e in result.episodes]


def test_random_policy_is_seeded_and_schema_valid(echo_server):
    # --url only: no manifest, reward range [0, 1] by default
    a = evaluate(url=echo_server.url, policy="random", episodes=3, group_size=2, seed=7)
    b = evaluate(url=echo_server.url, policy="random", episodes=3, group_size=2, seed=7)
    c = evaluate(url=echo_server.url, policy="random", episodes=3, group_size=2, seed=8)
    assert _actions(a) == _actions(b) and _actions(a) != _actions(c)
    assert [e.seed for e in a.episodes] == [7, 7, 8, 8, 9, 9]
    s = a.summary
    assert s["invalid_actions"] == 0 and s["parse_failures"] == 0 and s["episode_errors"] == 0
    assert all(isinstance(act["message"], str) for ep in _actions(a) for act in ep)
    assert s["environment"]["path"] is None and s["environment"]["reward_range"] == [0.0, 1.0]
    assert s["settings"]["max_steps"] == 32  # no manifest: the default cap
    # random strings do not reproduce the phrase: every episode runs to the env's own limit
    assert s["success_rate"] == 0.0 and s["mean_steps"] == 5
    assert 0.0 <= s["step_reward"]["max"] < 1.0


def test_oracle_policy_reaches_the_max(echo_env, echo_server, tmp_path):
    result = evaluate(
        echo_env,
        url=echo_server.url,
        policy="oracle",
        episodes=3,
        group_size=2,
        concurrency=2,
        python=sys.executable,
        out_dir=tmp_path,
    )
    s = result.summary
    assert s["success_rate"] == 1.0 and s["return"] == {
        "n": 6,
        "mean": 1.0,
        "std": 0.0,
        "min": 1.0,
        "max": 1.0,
    }
    assert s["pass_at_k"]["mean"] == {"1": 1.0, "2": 1.0} and s["settings"]["concurrency"] == 2
    assert s["settings"]["max_steps"] == read_manifest(echo_env).spec.max_steps
    assert (tmp_path / "rewards.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_module_callable_policy_and_its_failures(echo_env, echo_server, copy_env):
    env = copy_env(echo_env)
    (env / "agents.py").write_text(
        "def half(obs):\n    return {'message': obs['target'].split()[0]}\n\n"
        "def broken(obs):\n    raise RuntimeError('boom')\n"
    )
    result = evaluate(
        env,
        url=echo_server.url,
        policy="agents:half",
        episodes=2,
        max_steps=2,
        python=sys.executable,
    )
    s = result.summary
    # echo pays its similarity on the episode's last attempt: cut off at 2 steps, none is paid
    assert s["success_rate"] == 0.0 and s["return"]["mean"] == 0.0
    assert s["truncated_episodes"] == 2 and s["mean_steps"] == 2
    played_out = evaluate(
        env, url=echo_server.url, policy="agents:half", episodes=1, python=sys.executable
    ).summary
    max_steps = read_manifest(echo_env).spec.max_steps
    assert played_out["truncated_episodes"] == 0 and played_out["mean_steps"] == max_steps
    assert 0.0 < played_out["return"]["mean"] < 1.0  # partial credit, once
    broken = evaluate(
        env, url=echo_server.url, policy="agents:broken", episodes=1, python=sys.executable
    )
    ep = broken.episodes[0]
    assert "boom" in ep.error and ep.steps[0].error_code == "POLICY_ERROR"
    assert broken.exit_code == 1


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"policy": "oracle"}, "needs the environment directory"),
        ({"policy": "nonsense"}, "unknown policy"),
        ({"policy": "random", "episodes": 0}, "--episodes"),
        ({"policy": "random", "max_steps": 0}, "--max-steps"),
    ],
)
def test_usage_errors(echo_server, kwargs, match):
    with pytest.raises(UsageError, match=match):
        evaluate(url=echo_server.url, **kwargs)


def test_concurrent_sessions_run_in_parallel(echo_env, echo_server, openai_stub, stub_key):
    model = f"slow:{150 + uuid.uuid4().int % 10}"
    result = evaluate(
        echo_env,
        url=echo_server.url,
        model=model,
        base_url=openai_stub.base_url,
        episodes=8,
        concurrency=4,
    )
    assert result.summary["settings"]["concurrency"] == 4  # echo's capacity is 16
    assert result.summary["success_rate"] == 1.0 and len(result.episodes) == 8
    assert openai_stub.log()["max_inflight"] >= 2
    assert sorted(e.episode for e in result.episodes) == list(range(8))


@pytest.fixture(scope="module")
def capacity2_server(echo_env):
    server = start_server(
        echo_env,
        read_manifest(echo_env).app,
        python=sys.executable,
        env={"MAX_CONCURRENT_ENVS": "2"},
    )
    try:
        server.wait_healthy(timeout_s=90)
        yield server
    finally:
        server.stop()


def test_concurrency_capped_by_capacity(echo_env, capacity2_server):
    notes = []
    result = evaluate(
        echo_env,
        url=capacity2_server.url,
        policy="oracle",
        episodes=4,
        concurrency=5,
        python=sys.executable,
        on_note=notes.append,
    )
    s = result.summary
    assert s["settings"]["concurrency"] == 2 and s["environment"]["capacity"] == 2
    assert len(notes) == 1 and "CAPACITY_REACHED" in notes[0] and "capped to 2" in notes[0]
    assert s["success_rate"] == 1.0 and s["episodes"] == 4


def test_every_session_taken_is_an_error(echo_env, capacity2_server):
    from envkit.errors import WireError
    from envkit.wire import EnvSession

    held = [EnvSession(capacity2_server.url) for _ in range(2)]
    try:
        for s in held:
            s.state()
        with pytest.raises(WireError, match="CAPACITY_REACHED") as info:
            evaluate(echo_env, url=capacity2_server.url, policy="random", episodes=1)
        assert "OpenEnv#1000" in info.value.hint
    finally:
        for s in held:
            s.close()
