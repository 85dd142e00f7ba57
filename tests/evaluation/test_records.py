"""envkit.evaluation.records: the JSON of trajectories.jsonl lines and of summary.json's
``settings`` that other tools read (``envkit label``): exact key sets and order, optional step
fields written only when set, planned episodes and seeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envkit.envdir.manifest import EnvSpec
from envkit.envdir.project import resolve_timeouts
from envkit.evaluation.records import EpisodeRecord, EvalSettings, StepRecord

SETTINGS_KEYS = [
    "groups_planned",
    "group_size",
    "episodes_planned",
    "seed",
    "seeds",
    "max_steps",
    "temperature",
    "max_tokens",
    "max_retries",
    "concurrency_requested",
    "concurrency",
    "system_prompt",
    "system_prompt_text",
    "timeout_s",
    "startup_timeout_s",
    "reply_timeout_s",
    "session_retries",
]

EPISODE_KEYS = [
    "episode",
    "group",
    "member",
    "seed",
    "reset",
    "steps",
    "error",
    "return",
    "max_reward",
    "success",
    "done",
    "truncated",
    "steps_taken",
    "duration_s",
]


def _settings(**overrides) -> EvalSettings:
    values = {
        "policy": "openai",
        "model": "m",
        "base_url": "http://127.0.0.1:1/v1",
        "api_key_env": "KEY",
        "episodes": 3,
        "group_size": 2,
        "concurrency": 4,
        "max_steps": 10,
        "temperature": 0.7,
        "seed": 100,
        "out_dir": Path("out"),
        "system_prompt": None,
        "max_tokens": 256,
        "max_retries": 2,
        "timeouts": resolve_timeouts(EnvSpec(step_timeout_s=3.0), timeout_s=120.0),
    }
    values.update(overrides)
    return EvalSettings(**values)


# -- EvalSettings -------------------------------------------------------------------------------


def test_total_and_tasks_plan_groups_of_members_with_one_seed_per_group() -> None:
    s = _settings()
    assert s.total == 6
    assert s.tasks() == [
        (0, 0, 0, 100),
        (1, 0, 1, 100),
        (2, 1, 0, 101),
        (3, 1, 1, 101),
        (4, 2, 0, 102),
        (5, 2, 1, 102),
    ]
    assert [episode for episode, *_ in s.tasks()] == list(range(s.total))


@pytest.mark.parametrize(("episodes", "group_size"), [(0, 3), (3, 0), (1, 1)])
def test_tasks_of_degenerate_plans(episodes: int, group_size: int) -> None:
    s = _settings(episodes=episodes, group_size=group_size)
    assert len(s.tasks()) == s.total == episodes * group_size


def test_settings_json_of_the_openai_policy() -> None:
    out = _settings().to_json(concurrency_used=3, system_prompt_text="You are an agent.")
    assert list(out) == SETTINGS_KEYS
    assert out == {
        "groups_planned": 3,
        "group_size": 2,
        "episodes_planned": 6,
        "seed": 100,
        "seeds": [100, 101, 102],
        "max_steps": 10,
        "temperature": 0.7,
        "max_tokens": 256,
        "max_retries": 2,
        "concurrency_requested": 4,
        "concurrency": 3,
        "system_prompt": "derived from /schema",
        "system_prompt_text": "You are an agent.",
        "timeout_s": 120.0,
        "startup_timeout_s": 60.0,
        "reply_timeout_s": 6.0,
        "session_retries": 2,
    }
    json.dumps(out)


def test_a_custom_system_prompt_is_reported_as_custom() -> None:
    out = _settings(system_prompt="Be brief.").to_json(concurrency_used=1)
    assert out["system_prompt"] == "custom"
    assert out["system_prompt_text"] is None  # only what the caller says was sent


@pytest.mark.parametrize("policy", ["random", "oracle", "noop"])
def test_model_settings_are_null_for_other_policies(policy: str) -> None:
    out = _settings(policy=policy, system_prompt="ignored").to_json(
        concurrency_used=2, system_prompt_text="ignored too"
    )
    assert list(out) == SETTINGS_KEYS
    assert out["temperature"] is None
    assert out["max_retries"] is None
    assert out["system_prompt"] is None
    assert out["system_prompt_text"] is None
    assert out["max_tokens"] == 256  # written as given, whatever the policy


def test_settings_without_a_budget_write_null_timeout() -> None:
    out = _settings(timeouts=resolve_timeouts(EnvSpec())).to_json(concurrency_used=1)
    assert (out["timeout_s"], out["startup_timeout_s"], out["reply_timeout_s"]) == (
        None,
        60.0,
        10.0,
    )


# -- StepRecord ---------------------------------------------------------------------------------


def test_a_minimal_step_has_only_the_fixed_keys() -> None:
    out = StepRecord(step=1, action=None).to_json()
    assert out == {
        "step": 1,
        "action": None,
        "policy_latency_s": None,
        "observation": None,
        "reward": 0.0,
        "done": False,
        "latency_s": None,
    }
    assert list(out) == [
        "step",
        "action",
        "policy_latency_s",
        "observation",
        "reward",
        "done",
        "latency_s",
    ]


def test_a_full_step_writes_every_optional_field_in_place() -> None:
    step = StepRecord(
        step=2,
        action={"message": "hi"},
        policy_latency_s=0.25,
        reply='{"message": "hi"}',
        usage={"prompt_tokens": 10, "completion_tokens": 3},
        observation={"text": "hi"},
        reward=1.0,
        done=True,
        latency_s=0.01,
        error="bad action",
        error_code="VALIDATION_ERROR",
        parse_error=True,
    )
    out = step.to_json()
    assert list(out) == [
        "step",
        "action",
        "policy_latency_s",
        "reply",
        "usage",
        "observation",
        "reward",
        "done",
        "latency_s",
        "error",
        "error_code",
        "parse_error",
    ]
    assert out["usage"] == {"prompt_tokens": 10, "completion_tokens": 3}
    assert out["parse_error"] is True
    assert json.loads(json.dumps(out)) == out


def test_empty_but_set_optional_fields() -> None:
    # An empty reply or error is still what happened and is written; empty usage is not.
    out = StepRecord(step=1, action=None, reply="", usage={}, error="", error_code="").to_json()
    assert out["reply"] == "" and out["error"] == "" and out["error_code"] == ""
    assert "usage" not in out
    assert "parse_error" not in StepRecord(step=1, action=None, parse_error=False).to_json()


def test_a_non_numeric_reward_is_kept_as_sent() -> None:
    # The environment's answer is recorded as is; the evaluator judges it, not the record.
    assert StepRecord(step=1, action={}, reward=None).to_json()["reward"] is None
    assert StepRecord(step=1, action={}, reward="1.0").to_json()["reward"] == "1.0"


# -- EpisodeRecord ------------------------------------------------------------------------------


def test_a_failed_reset_episode() -> None:
    out = EpisodeRecord(episode=4, group=2, member=0, seed=102, error="reset failed").to_json()
    assert list(out) == EPISODE_KEYS
    assert out == {
        "episode": 4,
        "group": 2,
        "member": 0,
        "seed": 102,
        "reset": None,
        "steps": [],
        "error": "reset failed",
        "return": 0.0,
        "max_reward": None,
        "success": False,
        "done": False,
        "truncated": False,
        "steps_taken": 0,
        "duration_s": 0.0,
    }


def test_a_played_episode_is_one_jsonl_line() -> None:
    record = EpisodeRecord(
        episode=0,
        group=0,
        member=0,
        seed=7,
        reset={"observation": {"text": ""}, "reward": None, "done": False, "latency_s": 0.1},
        steps=[
            StepRecord(step=1, action={"a": 1}, reward=0.5, latency_s=0.02),
            StepRecord(step=2, action={"a": 2}, reward=1.0, done=True, latency_s=0.03),
        ],
        return_=1.5,
        max_reward=1.0,
        success=True,
        done=True,
        duration_s=0.4,
    )
    out = record.to_json()
    assert "return_" not in out and out["return"] == 1.5
    assert out["steps_taken"] == record.steps_taken == 2
    assert [s["step"] for s in out["steps"]] == [1, 2]
    assert out["steps"][1] == record.steps[1].to_json()
    line = json.dumps(out)
    assert "\n" not in line
    assert json.loads(line) == out


def test_steps_default_is_not_shared_between_records() -> None:
    a = EpisodeRecord(episode=0, group=0, member=0, seed=0)
    b = EpisodeRecord(episode=1, group=0, member=1, seed=0)
    a.steps.append(StepRecord(step=1, action=None))
    assert b.steps == [] and b.to_json()["steps_taken"] == 0
