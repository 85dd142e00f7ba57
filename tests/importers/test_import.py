"""Imported environments (three reasoning-gym tasks, two verifiers modules written here) are
ordinary envkit environments: `envkit validate` (static and runtime) has zero findings (an
exact-answer task: only EK523, info), the oracle plays every episode to the maximum reward
over OpenEnv's client, their own tests pass, the source is pinned exactly, and `openenv
validate` (0.10) passes."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.helpers import cached_venv
from tests.importers.conftest import FIXTURES, RG_TASKS

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("importers"), pytest.mark.timeout(1800)]

SOURCES = [f"reasoning-gym:{t}" for t in RG_TASKS] + [
    str(FIXTURES / "vf_single.py"),
    str(FIXTURES / "vf_multi.py"),
]
IDS = [*RG_TASKS, "vf_single", "vf_multi"]


#: id -> why EK523 (no-training-signal, info) is the one finding expected: the task's scorer
#: pays the exact answer only, so no weak policy of envkit earns anything, as a small starting
#: model would not (docs/import.md says what to do about it).
EXACT_ANSWER = {
    "leg_counting": "score_answer pays the exact leg count only",
    "basic_arithmetic": "score_answer pays the exact result only",
    "color_cube_rotation": "score_answer pays the exact colour only",
    "vf_multi": "the rubric pays the exact word, and its quick part only when that ends turn 1",
}


#: id -> the reward-design defect of the fixture itself that validate reports (an error).
FIXTURE_DEFECTS = {
    # its parser takes the last number of the reply, so "The answer is not 16." is paid as
    # 16: the question-blind `denied` policy (bohrin's false-negation probe) earns 1.0
    "vf_single": "EK524",
}


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_envkit_validate_has_zero_findings(imported_envs, source):
    from envkit.validation import validate

    env = imported_envs[source]
    report = validate(env.path, python=env.python)
    name = dict(zip(SOURCES, IDS, strict=True))[source]
    expected = {"EK523"} if name in EXACT_ANSWER else set()
    if name in FIXTURE_DEFECTS:
        found = [f for f in report.findings if f.code == FIXTURE_DEFECTS[name]]
        assert found and "`denied`" in found[0].message, report.findings
        expected.add(FIXTURE_DEFECTS[name])
    assert [f"{f.code} {f.message}" for f in report.findings if f.code not in expected] == []
    assert {f.code for f in report.findings} == expected
    if name not in FIXTURE_DEFECTS:
        assert all(f.severity.value == "info" for f in report.findings)
        assert report.passed


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_oracle_episodes_reach_the_maximum(imported_envs, source):
    from openenv.core import GenericEnvClient

    from envkit.envdir.manifest import read_manifest
    from envkit.policy import PolicyProcess
    from envkit.server import start_server

    env = imported_envs[source]
    manifest = read_manifest(env.path)
    spec = manifest.spec
    server = start_server(env.path, manifest.app, python=env.python)
    oracle = PolicyProcess(spec.oracle, env.path, env.python)
    try:
        server.wait_healthy(timeout_s=120)
        with GenericEnvClient(base_url=server.url).sync() as client:
            for seed in (*spec.seeds, 11, 12):
                result = client.reset(seed=seed)
                rewards = []
                while not result.done:
                    assert len(rewards) < spec.max_steps, "episode longer than max_steps"
                    result = client.step(oracle(result.observation))
                    rewards.append(result.reward)
                assert max(rewards) == spec.reward_range[1], (source, seed, rewards)
    finally:
        oracle.close()
        server.stop()


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_own_tests_pass(imported_envs, source):
    env = imported_envs[source]
    proc = subprocess.run(
        [env.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=env.path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout


@pytest.mark.parametrize("task", RG_TASKS)
def test_reasoning_gym_is_pinned_and_the_shape_is_inits(imported_envs, task):
    env = imported_envs[f"reasoning-gym:{task}"]
    pyproject = (env.path / "pyproject.toml").read_text()
    assert '"reasoning-gym==0.1.25"' in pyproject
    assert 'name = "reasoning-gym:' + task + '"' in pyproject  # [tool.envkit.template]
    for rel in (
        "Dockerfile",
        "server/app.py",
        "trl_env.py",
        "inference.py",
        "README.md",
        "AGENTS.md",
        "openenv.yaml",
        "uv.lock",
        "validation/runtime.json",
        "server/oracle.py",
        "tests/test_environment.py",
    ):
        assert (env.path / rel).is_file(), rel
    assert (env.path / ".agents" / "skills").is_dir()


def _in_env(env, code: str) -> str:
    proc = subprocess.run(
        [env.python, "-c", code], cwd=env.path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_difficulty_settings_are_reset_options(imported_envs):
    """leg_counting's config fields (min_animals, max_animals ...) reach reasoning-gym;
    unknown ones and refused values are errors."""
    env = imported_envs["reasoning-gym:leg_counting"]
    out = _in_env(
        env,
        "from server.leg_counting_environment import LegCountingEnvironment as E\n"
        "q = E().reset(seed=3, min_animals=1, max_animals=1).question\n"
        "print(q.split('have ')[-1].count(','))\n"
        "for bad in ({'min_animals': 0}, {'colour': 1}):\n"
        "    try:\n"
        "        E().reset(seed=3, **bad)\n"
        "    except ValueError as exc:\n"
        "        print('refused', exc)\n",
    )
    lines = out.splitlines()
    assert lines[0] == "0"  # one kind of animal: no list separator
    assert len([line for line in lines if line.startswith("refused")]) == 2
    assert "unknown option(s) colour" in out


def test_verifiers_module_is_copied_and_multi_turn_is_kept(imported_envs):
    env = imported_envs[str(FIXTURES / "vf_multi.py")]
    assert (env.path / "server" / "source_env.py").read_bytes() == (
        FIXTURES / "vf_multi.py"
    ).read_bytes()
    manifest = (env.path / "openenv.yaml").read_text()
    assert re.search(r"max_steps: 5\b", manifest)
    out = _in_env(
        env,
        (
            "from server.source import Episode, load\n"
            "ep = Episode(load(), 0)\n"
            "replies, result = ep.act('3')\n"
            "print(replies[0]['content'], result)\n"
            "replies, result = ep.act('7')\n"
            "print(replies, result)\n"
        ),
    )
    # wrong guess: the env's coroutine replies; right guess on turn 2: found (0.75), not quick
    assert out.splitlines() == ["higher None", "[] (0.75, {'found': 1.0, 'quick': 0.0})"]


OPENENV_VERSION = "0.10.0"


def test_openenv_validate_passes(imported_envs):
    """OpenEnv 0.10's own CLI, path mode, static level (runtime needs Docker): PASS."""
    cli = str(cached_venv(f"openenv=={OPENENV_VERSION}\n") / "bin" / "openenv")
    env = imported_envs["reasoning-gym:leg_counting"]
    proc = subprocess.run(
        [cli, "validate", str(env.path), "--level", "static"],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Verdict: PASS" in proc.stdout, proc.stdout


def test_list_prints_reasoning_gyms_tasks_one_per_line(cli):
    """`envkit import --list reasoning-gym` reads the pinned reasoning-gym's registry: one
    task per line on stdout (tab, its description), the count and the next command on
    stderr; an unknown task's error points at it."""
    result = cli("import", "--list", "reasoning-gym")
    assert result.exit_code == 0, result.output
    tasks = dict(line.partition("\t")[::2] for line in result.stdout.splitlines())
    assert {"leg_counting", "countdown", "basic_arithmetic"} <= set(tasks)
    assert len(tasks) > 50 and all(" " not in t for t in tasks)
    assert f"{len(tasks)} tasks: `envkit import reasoning-gym:TASK NAME`" in result.stderr
    unknown = cli("import", "reasoning-gym:leg_countin", "x")
    assert unknown.exit_code == 2
    assert "`envkit import --list reasoning-gym`" in unknown.output
