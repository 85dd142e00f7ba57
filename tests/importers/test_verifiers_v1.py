"""`envkit import verifiers:SOURCE` for verifiers.v1 tasksets, against the real verifiers 0.4.0
wheel: packages made by its own `vf-init` (a reverse-word task, a tool taskset with a
`@vf.stop`) import, install, pass `envkit validate` without an error finding, and score the
right answer 1.0 and a wrong one 0.0 over OpenEnv's WebSocket client; a container task is
refused with the reason; Hub ids fail clearly offline."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from envkit.errors import UsageError
from envkit.importers.verifiers_v1 import is_taskset_source, locate, project_dependencies
from tests.helpers import cached_venv
from tests.importers.conftest import FIXTURES, ImportedEnv, build_imported

V1 = FIXTURES / "vf_v1"


def test_sources_are_told_apart(tmp_path):
    pkg = tmp_path / "proj" / "my_tasks"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (tmp_path / "proj" / "pyproject.toml").write_text(
        '[project]\nname = "my-tasks"\ndependencies = ["verifiers", "numpy>=2"]\n'
    )
    assert is_taskset_source(str(tmp_path / "proj"))
    assert is_taskset_source("owner/my-env@0.1.2")
    assert not is_taskset_source("my_env.py")
    assert locate(str(tmp_path / "proj")) == (pkg, tmp_path / "proj")
    assert locate(str(pkg)) == (pkg, tmp_path / "proj")
    assert project_dependencies(tmp_path / "proj") == ["numpy"]


def test_a_hostile_pyproject_is_a_usage_error_not_a_crash(tmp_path):
    # nested a thousand deep, tomllib overflows the stack: the one TOML reader turns it into
    # a one-line cause
    (tmp_path / "pyproject.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(UsageError, match="nested too deeply"):
        project_dependencies(tmp_path)


def test_hub_ids_fail_clearly_offline():
    with pytest.raises(UsageError) as err:
        locate("primeintellect/reverse-text@0.1.0")
    assert "Environments Hub" in str(err.value)
    assert "prime env install primeintellect/reverse-text@0.1.0" in err.value.hint


def test_a_directory_of_several_packages_is_refused(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    with pytest.raises(UsageError, match="holds 2 Python packages"):
        locate(str(tmp_path))


def vf_init(parent: Path, name: str, *flags: str) -> Path:
    """`vf-init NAME` of the real verifiers 0.4.0 (cached venv); the project directory."""
    venv = cached_venv("verifiers==0.4.0\n")
    subprocess.run(
        [str(venv / "bin" / "vf-init"), name, "--path", str(parent), *flags],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return parent / name.replace("-", "_")


@pytest.fixture(scope="module")
def vf_envs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ImportedEnv]:
    """The reverse-word and tool-echo packages, made by vf-init and filled in, imported and
    installed."""
    src = tmp_path_factory.mktemp("vf-src")
    reverse = vf_init(src, "reverse-word")
    shutil.copy(V1 / "reverse_word_taskset.py", reverse / "reverse_word" / "taskset.py")
    tools = vf_init(src, "tool-echo", "-T")
    shutil.copy(V1 / "tool_echo_taskset.py", tools / "tool_echo" / "taskset.py")
    shutil.copy(V1 / "tool_echo_tool.py", tools / "tool_echo" / "servers" / "tool.py")
    parent = tmp_path_factory.mktemp("vf-imported")
    return {
        "reverse": build_imported(parent, f"verifiers:{reverse}", "reverse"),
        "tools": build_imported(parent, f"verifiers:{tools}", "tools"),
    }


def _serve(env: ImportedEnv):
    from envkit.envdir.manifest import read_manifest
    from envkit.server import start_server

    server = start_server(env.path, read_manifest(env.path).app, python=env.python)
    server.wait_healthy(timeout_s=120)
    return server


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_reverse_word_validates_and_scores_over_openenvs_client(vf_envs):
    from openenv.core import GenericEnvClient

    from envkit.validation import validate

    env = vf_envs["reverse"]
    report = validate(env.path, python=env.python)
    assert [f"{f.code} {f.message}" for f in report.errors] == []
    # the task asks for an exact string: EK516 (brittle verifier) is the one expected warning,
    # and no weak policy of envkit writes the reversed word: EK523 (info)
    assert {f.code for f in report.findings} <= {"EK516", "EK523"}
    assert "verifiers==0.4.0" in (env.path / "server" / "verifiers-requirements.txt").read_text()
    server = _serve(env)
    try:
        with GenericEnvClient(base_url=server.url).sync() as client:
            for seed, word in ((0, "apple"), (3, "dragon")):
                obs = client.reset(seed=seed).observation
                assert word in obs["messages"][-1]["content"]
                right = client.step({"message": word[::-1]})
                assert (right.reward, right.done) == (1.0, True)
                assert right.observation["metrics"] == {"reward": 1.0}
                client.reset(seed=seed)
                wrong = client.step({"message": word})
                assert (wrong.reward, wrong.done) == (0.0, True)
            # TasksetConfig fields are reset options: num_tasks=2 leaves two tasks
            obs = client.reset(seed=3, num_tasks=2).observation
            assert "banana" in obs["messages"][-1]["content"]
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_tool_taskset_calls_its_tools_and_stops(vf_envs):
    from openenv.core import GenericEnvClient

    env = vf_envs["tools"]
    server = _serve(env)
    call = {"id": "c1", "type": "function"}
    call["function"] = {"name": "tool_echo_reverse", "arguments": '{"text": "kettle"}'}
    try:
        with GenericEnvClient(base_url=server.url).sync() as client:
            obs = client.reset(seed=0).observation
            assert [t["function"]["name"] for t in obs["tools"]] == ["tool_echo_reverse"]
            used = client.step({"message": "", "tool_calls": [call]})
            assert not used.done and used.observation["messages"][0]["content"] == "elttek"
            answered = client.step({"message": "elttek"})
            assert (answered.reward, answered.done) == (1.0, True)
            client.reset(seed=0)
            stopped = client.step({"message": "I give up", "tool_calls": [call]})
            assert (stopped.reward, stopped.done) == (0.0, True)  # the @vf.stop ended it
    finally:
        server.stop()


@pytest.mark.slow
def test_a_container_task_is_refused_with_the_reason(tmp_path):
    from envkit.importers import import_environment

    boxed = vf_init(tmp_path, "boxed")
    shutil.copy(V1 / "boxed_taskset.py", boxed / "boxed" / "taskset.py")
    with pytest.raises(UsageError, match="container runtime"):
        import_environment(f"verifiers:{boxed}", "boxed-env", output_dir=tmp_path / "out")
    assert not (tmp_path / "out" / "boxed-env").exists()
