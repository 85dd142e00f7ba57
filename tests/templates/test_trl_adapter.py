"""The TRL multi-turn adapters (`trl_env.py`, issue 11 item 6), used the way TRL 1.16's
`GRPOTrainer(environment_factory=...)` uses them: built with no arguments, methods found with
`inspect.getmembers(type(env), inspect.isfunction)`, each tool's JSON Schema made by
`transformers.utils.get_json_schema`, `reset(**row)` then tool calls by name over a live
server until the episode ends, `get_reward()`. Runs in each environment's own venv (the adapter
imports the environment's package); no model, no GPU."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.templates.conftest import WITH_ADAPTER, BuiltEnv

pytestmark = pytest.mark.timeout(900)

MULTI_TURN = WITH_ADAPTER
TRANSFORMERS_SPEC = "transformers>=5.13"  # TRL 1.16: >= 5.2, and below 5.13 also jmespath

# The tools each adapter must expose to TRL, with the JSON Schema types of their arguments.
EXPECTED_TOOLS = {
    "guess": {"guess": {"number": "integer"}},
    "tools": {
        "get_price": {"item": "string"},
        "get_exchange_rate": {"currency": "string"},
        "submit_answer": {"amount": "number"},
    },
    "gymnasium": {"act": {"action": "integer"}},
    "code": {"submit": {"code": "string"}},
}

# Driver run inside the environment's venv. argv: template, package, class name, seeds (JSON).
# It mirrors TRL's grpo_trainer.py: probe one instance, split methods into reset / get_reward /
# tools, call tools by name with keyword arguments; the oracle's action dict picks the call.
DRIVER = r'''
import importlib, inspect, json, sys
from transformers.utils import get_json_schema

template, package, class_name = sys.argv[1:4]
seeds = json.loads(sys.argv[4])
cls = getattr(importlib.import_module(f"{package}.trl_env"), class_name)
policy = importlib.import_module(f"{package}.server.oracle").policy

env = cls()  # TRL: factory() with no arguments
members = dict(inspect.getmembers(type(env), predicate=inspect.isfunction))
tools = {name: getattr(env, name) for name in members
         if name not in ("reset", "get_reward") and not name.startswith("_")}
out = {"has_reset": "reset" in members, "has_get_reward": "get_reward" in members,
       "schemas": {name: get_json_schema(tool) for name, tool in tools.items()}, "episodes": []}


def call(action):
    """The oracle's action dict as TRL would call the tool: name + keyword arguments."""
    if template == "guess":
        return "guess", {"number": action["guess"]}
    if template == "tools":
        return action["tool_name"], action["arguments"]
    if template == "gymnasium":
        return "act", {"action": action["action"]}
    return "submit", {"code": action["source"]}


for seed in seeds:
    prompt_text = env.reset(prompt=[{"role": "user", "content": "Play."}], seed=seed)
    steps, last_text = 0, ""
    while not env._done:
        name, arguments = call(policy(env._observation.model_dump()))
        last_text = tools[name](**arguments)
        steps += 1
    try:
        tools[name](**arguments)
        after_end = None
    except ValueError as exc:  # TRL turns a tool's exception into {"error": str(exc)}
        after_end = str(exc)
    out["episodes"].append({"seed": seed, "prompt": prompt_text, "steps": steps,
                            "last_text": last_text, "reward": env.get_reward(),
                            "after_end": after_end})
with env:  # ends the session
    pass
print(json.dumps(out))
'''


def _package(env: BuiltEnv) -> tuple[str, str]:
    from envkit.names import normalise_name

    names = normalise_name(env.path.name)
    return names.package, f"{names.class_prefix}TRLEnv"


@pytest.fixture(scope="module")
def with_transformers(built_envs: dict[str, BuiltEnv]) -> dict[str, BuiltEnv]:
    """`transformers` (what TRL builds tool schemas with; no torch needed for that) added to
    each multi-turn environment's venv."""
    from tests.templates.conftest import _uv

    for template in MULTI_TURN:
        subprocess.run(
            [
                _uv(),
                "pip",
                "install",
                "-q",
                "--python",
                built_envs[template].python,
                TRANSFORMERS_SPEC,
            ],
            check=True,
            timeout=600,
        )
    return built_envs


def _run(env: BuiltEnv, url: str, code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [env.python, "-c", code, *args],
        cwd=env.path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "ENV_URL": url},
    )


@pytest.mark.parametrize("template", MULTI_TURN)
def test_adapter_plays_oracle_episodes_as_trl_does(with_transformers, served, template):
    from envkit.envdir.manifest import read_manifest

    env = with_transformers[template]
    spec = read_manifest(env.path).spec
    package, class_name = _package(env)
    seeds = list(spec.seeds[:2])
    proc = _run(env, served[template], DRIVER, template, package, class_name, json.dumps(seeds))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])

    assert out["has_reset"] and out["has_get_reward"]
    # Exactly the expected tools, each schema accepted by get_json_schema with typed arguments.
    assert set(out["schemas"]) == set(EXPECTED_TOOLS[template])
    for name, params in EXPECTED_TOOLS[template].items():
        function = out["schemas"][name]["function"]
        assert function["name"] == name and function["description"]
        props = function["parameters"]["properties"]
        assert {k: v["type"] for k, v in props.items()} == params
        assert all(v.get("description") for v in props.values())
        assert function["parameters"]["required"] == list(params)

    assert [e["seed"] for e in out["episodes"]] == seeds  # one instance, several episodes
    for episode in out["episodes"]:
        assert isinstance(episode["prompt"], str) and episode["prompt"].strip()
        assert 1 <= episode["steps"] <= spec.max_steps
        assert episode["reward"] == spec.reward_range[1], episode  # the oracle reaches the max
        assert "episode is over" in episode["last_text"]
        assert episode["after_end"] and "episode is over" in episode["after_end"]


def test_gymnasium_act_schema_names_the_valid_actions(with_transformers, served):
    env = with_transformers["gymnasium"]
    package, class_name = _package(env)
    code = (
        f"from transformers.utils import get_json_schema\n"
        f"from {package}.trl_env import {class_name}\n"
        f"print(get_json_schema({class_name}.act)['function']['parameters']"
        f"['properties']['action']['description'])"
    )
    proc = _run(env, served["gymnasium"], code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("integer 0..1.")


GUESS_PARTIAL = r"""
import json, sys
from openenv.core import GenericEnvClient
from {package}.trl_env import {cls}

env = {cls}()
env.reset(seed=3)
text = env.guess(number=1)
mid = env.get_reward()
with GenericEnvClient(base_url=sys.argv[1]).sync() as raw:
    raw.reset(seed=3)
    wire = raw.step({{"guess": 1}}).reward
try:
    env.guess(number=101)
    refused = ""
except ValueError as exc:
    refused = str(exc)
print(json.dumps({{"text": text, "mid": mid, "wire": wire, "refused": refused}}))
"""


def test_guess_reward_is_the_last_steps_reward(with_transformers, served):
    """Mid-episode `get_reward()` is exactly what the server paid for the last step; an
    out-of-range guess is refused before it reaches the server (TRL shows the model why)."""
    env = with_transformers["guess"]
    package, class_name = _package(env)
    code = GUESS_PARTIAL.format(package=package, cls=class_name)
    proc = _run(env, served["guess"], code, served["guess"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["mid"] == out["wire"] and 0.0 <= out["mid"] < 0.5
    assert "higher" in out["text"] and "Guesses left: 7" in out["text"]
    assert "between 1 and 100" in out["refused"]


SESSIONS = r"""
import gc, json, sys
from {package}.trl_env import {cls}

log = []
a, b = {cls}(), {cls}()            # the server's capacity (2) is now used up
a.reset(seed=0)
b.reset(seed=0)
try:
    {cls}().reset(seed=0)
    log.append("third session accepted")
except ConnectionError as exc:
    log.append("full" if "MAX_CONCURRENT_ENVS" in str(exc) else f"unhelpful: {{exc}}")
with a:                             # the end of a `with` block closes the session
    pass
c = {cls}()
c.reset(seed=0)
log.append("after with: ok")
del b
gc.collect()                        # so does garbage collection
d = {cls}()
d.reset(seed=0)
log.append("after gc: ok")
print("restart", flush=True)        # the parent restarts the server on the same port
sys.stdin.readline()
d.reset(seed=1)                     # the old session is gone: reset opens a new one
log.append("after restart: " + ("ok" if "Guesses left:" in d.guess(number=50) else "?"))
print(json.dumps(log))
"""


def test_sessions_are_released_and_reopened(with_transformers):
    """A server with room for two sessions: a third adapter is refused with the fix in the
    message; one ending by `with` or by garbage collection frees its slot (TRL never calls a
    close method); after a server restart, `reset` opens a new session."""
    from envkit.envdir.manifest import read_manifest
    from envkit.server import start_server

    env = with_transformers["guess"]
    package, class_name = _package(env)
    app = read_manifest(env.path).app
    limits = {"MAX_CONCURRENT_ENVS": "2"}
    server = start_server(env.path, app, python=env.python, env=limits)
    proc = None
    try:
        server.wait_healthy(timeout_s=120)
        proc = subprocess.Popen(
            [env.python, "-c", SESSIONS.format(package=package, cls=class_name)],
            cwd=env.path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "ENV_URL": server.url},
        )
        assert proc.stdout.readline().strip() == "restart", proc.communicate(timeout=60)
        port = server.port
        server.stop()
        server = start_server(env.path, app, python=env.python, port=port, env=limits)
        server.wait_healthy(timeout_s=120)
        out, err = proc.communicate("\n", timeout=120)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        server.stop()
    assert proc.returncode == 0, err[-3000:]
    assert json.loads(out.strip().splitlines()[-1]) == [
        "full",
        "after with: ok",
        "after gc: ok",
        "after restart: ok",
    ]


def test_unreachable_server_says_what_to_do(with_transformers):
    env = with_transformers["guess"]
    package, class_name = _package(env)
    proc = _run(
        env, "http://127.0.0.1:9", f"from {package}.trl_env import {class_name}\n{class_name}()"
    )
    assert proc.returncode != 0
    assert "ConnectionError" in proc.stderr and "envkit run" in proc.stderr
    assert "ENV_URL" in proc.stderr


def test_single_turn_templates_ship_no_adapter(built_envs):
    for template in ("rlvr",):
        assert not (built_envs[template].path / "trl_env.py").exists()
    for template in MULTI_TURN:
        readme = (built_envs[template].path / "README.md").read_text()
        assert "environment_factory=" in readme and "def env_reward" in readme
        assert Path(built_envs[template].path / "trl_env.py").is_file()


REPLICAS = r"""
import json
from {package}.trl_env import {cls}

a, b = {cls}(), {cls}()             # ENV_URLS=A,B: a on A, b on B (one slot each)
a.reset(seed=0)
b.reset(seed=1)
log = [a._url, b._url]
try:
    {cls}().reset(seed=2)           # round-robin: back to A, whose only slot a holds
    log.append("third accepted")
except ConnectionError as exc:
    log.append(str(exc))
print(json.dumps(log))
"""


def test_env_urls_spreads_instances_over_servers(with_transformers):
    """`ENV_URLS=A,B`: instances open their sessions round-robin on A and B (seen in each
    server's log), so two servers with one slot each hold two sessions; the third instance
    is A's again and is refused there."""
    from envkit.envdir.manifest import read_manifest
    from envkit.server import start_server

    env = with_transformers["guess"]
    package, class_name = _package(env)
    app = read_manifest(env.path).app
    servers = []
    try:
        for _ in range(2):
            servers.append(
                start_server(env.path, app, python=env.python, env={"MAX_CONCURRENT_ENVS": "1"})
            )
        for server in servers:
            server.wait_healthy(timeout_s=120)
        a, b = (s.url for s in servers)
        proc = subprocess.run(
            [env.python, "-c", REPLICAS.format(package=package, cls=class_name)],
            cwd=env.path,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "ENV_URLS": f"{a}, {b}", "ENV_URL": "http://127.0.0.1:9"},
        )
        accepted = [s.log_tail(10_000).count('"WebSocket /ws" [accepted]') for s in servers]
    finally:
        for server in servers:
            server.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = json.loads(proc.stdout.strip().splitlines()[-1])
    assert log[:2] == [a, b]
    assert a in log[2] and "MAX_CONCURRENT_ENVS" in log[2], log[2]
    assert accepted[0] >= 2 and accepted[1] >= 1, accepted  # A: a and the refused third
