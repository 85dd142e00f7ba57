"""The openai policy through the REAL `openai` client against tests/evaluation/openai_stub.py, on the
shared echo server (`--url` plus PATH for the manifest)."""

import json
import uuid

import pytest

from envkit.errors import ModelEndpointError
from envkit.evaluation import evaluate


def _run(echo_env, echo_server, stub, model, **kw):
    return evaluate(
        echo_env, url=echo_server.url, policy="openai", model=model, base_url=stub.base_url, **kw
    )


def test_solver_model_and_usage(echo_env, echo_server, openai_stub, stub_key, tmp_path):
    result = _run(echo_env, echo_server, openai_stub, "echo", episodes=3, out_dir=tmp_path)
    s = result.summary
    assert s["success_rate"] == 1.0 and s["return"]["mean"] == 1.0 and s["mean_steps"] == 1.0
    assert s["model"] == "echo" and s["api_key_env"] == "HF_TOKEN"
    assert s["settings"]["temperature"] == 0.0  # group size 1: greedy
    lines = (tmp_path / "trajectories.jsonl").read_text().splitlines()
    assert [json.loads(line)["seed"] for line in lines] == [0, 1, 2]
    step = json.loads(lines[0])["steps"][0]
    assert step["action"] == {"message": json.loads(lines[0])["reset"]["observation"]["target"]}
    assert step["reply"].startswith("```json") and step["usage"]["total_tokens"] > 0
    assert s["usage"]["total_tokens"] == sum(
        st["usage"]["total_tokens"] for line in lines for st in json.loads(line)["steps"]
    )
    assert stub_key not in (tmp_path / "summary.json").read_text()
    assert stub_key not in (tmp_path / "trajectories.jsonl").read_text()


def test_groups_pass_at_k_and_parse_failures(echo_env, echo_server, openai_stub, stub_key):
    # one code per episode, group-major: seed 0 -> 1,0,p ; seed 1 -> 1,1,0
    model = f"schedule:{uuid.uuid4().hex[:8]}:10p110"
    result = _run(
        echo_env, echo_server, openai_stub, model, episodes=2, group_size=3, max_steps=2, seed=4
    )
    s = result.summary
    returns = [e.return_ for e in result.episodes]
    assert returns == [1.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    assert [e.seed for e in result.episodes] == [4, 4, 4, 5, 5, 5]
    assert s["return"]["mean"] == pytest.approx(4 / 6)
    assert s["return"]["std"] == pytest.approx((2 / 9) ** 0.5)  # population std of 4 ones, 2 zeros
    assert s["success_rate"] == pytest.approx(4 / 6)
    g0, g1 = s["pass_at_k"]["groups"]
    assert (g0["successes"], g1["successes"]) == (2, 2)
    assert s["pass_at_k"]["mean"] == {"1": pytest.approx(2 / 3), "2": 1.0, "3": 1.0}
    # the "p" episode: an empty reply is a parse failure step with reward 0, then success
    p_episode = result.episodes[2]
    assert p_episode.steps[0].parse_error and p_episode.steps[0].reward == 0.0
    assert p_episode.steps[1].reward == 1.0 and p_episode.success
    assert s["parse_failures"] == 1
    assert s["mean_steps"] == pytest.approx((1 + 2 + 2 + 1 + 1 + 2) / 6)
    assert s["truncated_episodes"] == 2
    # groups sample: the default temperature is 1.0 and every request carried the key
    reqs = openai_stub.requests_for(model)
    assert {r["temperature"] for r in reqs} == {1.0} and all(r["authorized"] for r in reqs)
    assert s["settings"]["temperature"] == 1.0


def test_plain_text_reply_and_custom_system_prompt(
    echo_env, echo_server, openai_stub, stub_key, monkeypatch
):
    monkeypatch.setenv("MY_KEY", stub_key)
    monkeypatch.delenv("HF_TOKEN")
    result = _run(
        echo_env,
        echo_server,
        openai_stub,
        "plain",
        episodes=1,
        api_key_env="MY_KEY",
        system_prompt="Repeat the target.",
        max_tokens=16,
    )
    assert result.summary["success_rate"] == 1.0
    req = openai_stub.requests_for("plain")[-1]
    assert req["system"] == "Repeat the target." and req["max_tokens"] == 16


def test_401_names_the_variable_not_the_key(
    cli, echo_env, echo_server, openai_stub, monkeypatch, tmp_path
):
    monkeypatch.setenv("HF_TOKEN", "hf_wrong_secret_1234")
    r = cli(
        "eval",
        echo_env,
        "--url",
        echo_server.url,
        "--base-url",
        openai_stub.base_url,
        "--model",
        "echo",
        "-n",
        "1",
        "--out",
        tmp_path / "o",
    )
    assert r.exit_code == 2
    assert "401" in r.output and "$HF_TOKEN" in r.output
    assert "hf_wrong_secret_1234" not in r.output


def test_429_is_retried_a_bounded_number_of_times(
    echo_env, echo_server, openai_stub, stub_key, tmp_path
):
    before = len(openai_stub.requests_for("ratelimit"))
    with pytest.raises(ModelEndpointError) as info:
        _run(
            echo_env,
            echo_server,
            openai_stub,
            "ratelimit",
            episodes=2,
            max_retries=2,
            out_dir=tmp_path,
        )
    assert "429" in info.value.message and "2 retries" in info.value.message
    assert len(openai_stub.requests_for("ratelimit")) - before == 3  # 1 + 2 retries
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["episodes"] == 0 and "429" in summary["aborted"]
    assert "partial summary" in info.value.details


def test_context_too_long(echo_env, echo_server, openai_stub, stub_key):
    with pytest.raises(ModelEndpointError) as info:
        _run(echo_env, echo_server, openai_stub, "toolong", episodes=1)
    assert "context window" in info.value.message and "--max-steps" in info.value.hint


def test_unknown_model_and_unreachable_endpoint(echo_env, echo_server, openai_stub, stub_key):
    from envkit.server import free_port

    with pytest.raises(ModelEndpointError) as info:
        _run(echo_env, echo_server, openai_stub, "nope", episodes=1)
    assert "404" in info.value.message and "--model" in info.value.hint
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelEndpointError) as info:
        evaluate(
            echo_env, url=echo_server.url, model="echo", base_url=dead, episodes=1, max_retries=0
        )
    assert "Cannot reach" in info.value.message and "--base-url" in info.value.hint


def test_model_is_required(echo_env, echo_server, stub_key):
    from envkit.errors import UsageError

    with pytest.raises(UsageError, match="needs a model"):
        evaluate(echo_env, url=echo_server.url, policy="openai")
