"""eval on a tool-calling environment (the tools template): random tool calls carry arguments
from each tool's input schema, a call the tool refuses is an invalid action, and a fixed list
of actions replays (`--policy actions:JSON`)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from envkit.envdir.manifest import read_manifest
from envkit.errors import UsageError
from envkit.evaluation import evaluate
from envkit.evaluation.policies import parse_actions
from envkit.server import ServerProcess, start_server

TOOLS_ENV = Path(__file__).parents[1] / "validation" / "envs" / "blind" / "tools_template"


@pytest.fixture(scope="module")
def tools_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("tools") / "prices"
    shutil.copytree(TOOLS_ENV, dest)
    return dest


@pytest.fixture(scope="module")
def tools_server(tools_env: Path) -> Iterator[ServerProcess]:
    server = start_server(tools_env, read_manifest(tools_env).app, python=sys.executable)
    try:
        server.wait_healthy(timeout_s=90)
        yield server
    finally:
        server.stop()


def test_random_tool_calls_have_arguments_and_refusals_count_as_invalid(
    tools_env: Path, tools_server: ServerProcess
) -> None:
    result = evaluate(tools_env, url=tools_server.url, policy="random", episodes=4, seed=3)
    steps = [s for e in result.episodes for s in e.steps]
    tools = {"get_price": "item", "get_exchange_rate": "currency", "submit_answer": "amount"}
    # every call names a listed tool and fills that tool's own argument
    assert steps and all(tools[s.action["tool_name"]] in s.action["arguments"] for s in steps)
    refused = [s for s in steps if s.error_code == "TOOL_ERROR"]
    assert refused, "random item names and currencies must be refused by the tools"
    assert all(s.error and "unknown" in s.error for s in refused)
    assert result.summary["invalid_actions"] == len(refused)


def test_actions_policy_replays_a_fixed_answer(
    tools_env: Path, tools_server: ServerProcess
) -> None:
    actions = [{"tool_name": "submit_answer", "arguments": {"amount": 1.0}}]
    result = evaluate(
        tools_env,
        url=tools_server.url,
        policy="actions:" + json.dumps(actions),
        episodes=2,
        seed=0,
    )
    assert [[s.action for s in e.steps] for e in result.episodes] == [actions, actions]
    assert result.summary["invalid_actions"] == 0
    assert all(e.steps[-1].done for e in result.episodes)


@pytest.mark.parametrize(
    "policy, said",
    [
        ("actions:not json", "not JSON"),
        ("actions:[]", "non-empty JSON list"),
        ("actions:[1, 2]", "non-empty JSON list"),
        ("actions:@/nonexistent/file.json", "cannot read it"),
    ],
)
def test_actions_policy_refuses_what_is_not_a_list_of_actions(policy: str, said: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_actions(policy.removeprefix("actions:"))
    assert said in err.value.message
