"""`envkit eval` without dead ends for a newcomer: no model names the policies that need none,
and an unreachable model endpoint fails before the environment's server is started."""

from __future__ import annotations

import time

import pytest

from envkit.errors import ModelEndpointError


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MODEL_NAME", "API_BASE_URL", "OPENAI_API_KEY", "HF_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def _one_line_hint(output: str) -> str:
    """The hint line of an error report (the line after ``error: ...``)."""
    lines = output.strip().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("error:"))
    return lines[at + 1].strip()


@pytest.mark.usefixtures("no_model")
def test_bare_eval_names_oracle_and_random(cli, tmp_path, monkeypatch):
    # In an empty directory: the missing model is reported, not the missing openenv.yaml,
    # because the next step (a policy that needs no model) is what the newcomer lacks.
    monkeypatch.chdir(tmp_path)
    r = cli("eval")
    assert r.exit_code == 2
    assert "needs a model" in r.output
    assert (
        "no model? try `--policy oracle` or `--policy random`" in _one_line_hint(r.output).lower()
    )
    assert not (tmp_path / "evals").exists()


@pytest.mark.usefixtures("no_model")
def test_explicit_openai_without_model_same_hint(cli, echo_env, tmp_path):
    r = cli("eval", echo_env, "--policy", "openai", "--out", tmp_path / "o")
    assert r.exit_code == 2
    assert "try `--policy oracle` or `--policy random`" in r.output
    assert not (tmp_path / "o").exists()


@pytest.mark.usefixtures("no_model")
def test_unreachable_endpoint_fails_before_the_server_starts(cli, echo_env, tmp_path, monkeypatch):
    from envkit.server import free_port

    started: list[object] = []

    def no_server(*args, **kwargs):  # the probe must fail before this is ever reached
        started.append(args)
        raise AssertionError("the environment server was started")

    monkeypatch.setattr("envkit.evaluation.runner.start_server", no_server)
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    out = tmp_path / "o"
    t0 = time.perf_counter()
    r = cli("eval", echo_env, "--model", "echo", "--base-url", dead, "-n", "1", "--out", out)
    elapsed = time.perf_counter() - t0
    assert r.exit_code == 2, r.output
    assert f"Cannot reach the model endpoint {dead}" in r.output
    assert "--base-url" in r.output
    assert started == []
    assert not (out / "trajectories.jsonl").exists() and not (out / "summary.json").exists()
    assert elapsed < 5, elapsed  # a refused connection, one quick retry at most


def test_unreachable_endpoint_library_call(echo_env, no_model, tmp_path):
    from envkit.evaluation import evaluate
    from envkit.server import free_port

    dead = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelEndpointError, match="Cannot reach"):
        evaluate(echo_env, model="echo", base_url=dead, episodes=1, out_dir=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_reachable_endpoint_without_models_route_still_runs(
    echo_env, echo_server, openai_stub, stub_key, tmp_path
):
    # The stub has no GET /v1/models (404): an answer all the same, so the run goes on.
    from envkit.evaluation import evaluate

    result = evaluate(
        echo_env,
        url=echo_server.url,
        model="echo",
        base_url=openai_stub.base_url,
        episodes=1,
        out_dir=tmp_path / "o",
    )
    assert result.summary["success_rate"] == 1.0


_SLOW_POLICY = """import time

time.sleep({load})  # a heavy import


def policy(obs):
    time.sleep({call})
    return {{"message": obs["target"]}}
"""


def _slow_env(copy_env, echo_env, *, load: float, call: float):
    env = copy_env(echo_env)
    (env / "slowpolicy.py").write_text(_SLOW_POLICY.format(load=load, call=call))
    return env


def test_policy_load_counts_under_the_startup_timeout(echo_env, echo_server, copy_env):
    # Loading takes 2 s: fine under a 10 s start-up timeout even though one answer may take
    # only 1 s; each call is quick.
    import sys

    from envkit.evaluation import evaluate

    env = _slow_env(copy_env, echo_env, load=2, call=0)
    result = evaluate(
        env,
        url=echo_server.url,
        policy="slowpolicy:policy",
        episodes=1,
        python=sys.executable,
        startup_timeout_s=10,
        reply_timeout_s=1,
    )
    assert result.summary["success_rate"] == 1.0


def test_policy_load_past_the_startup_timeout_names_it(echo_env, echo_server, copy_env):
    import sys

    from envkit.errors import PolicyError
    from envkit.evaluation import evaluate

    env = _slow_env(copy_env, echo_env, load=4, call=0)
    with pytest.raises(PolicyError) as info:
        evaluate(
            env,
            url=echo_server.url,
            policy="slowpolicy:policy",
            episodes=1,
            python=sys.executable,
            startup_timeout_s=1,
            reply_timeout_s=30,
        )
    assert "did not load within 1 s" in info.value.message
    assert "heavy imports" in info.value.hint and "--startup-timeout" in info.value.hint


def test_policy_call_past_the_reply_timeout_names_it(echo_env, echo_server, copy_env):
    import sys

    from envkit.evaluation import evaluate

    env = _slow_env(copy_env, echo_env, load=0, call=3)
    result = evaluate(
        env,
        url=echo_server.url,
        policy="slowpolicy:policy",
        episodes=1,
        python=sys.executable,
        startup_timeout_s=30,
        reply_timeout_s=1,
    )
    ep = result.episodes[0]
    assert "no answer within 1 s, the reply timeout" in ep.error
    assert "`--reply-timeout S`" in ep.error
