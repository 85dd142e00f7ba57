"""envkit.envdir.project: loading an environment directory, choosing its interpreter, probing that
interpreter for the OpenEnv runtime (real subprocesses) and resolving the three time limits
from the options and the manifest. Every error names the next step."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import pytest

from envkit.envdir import EnvDir, EnvProject
from envkit.envdir.manifest import EnvSpec, ManifestSyntaxError, read_manifest
from envkit.envdir.project import (
    MIN_REPLY_TIMEOUT_S,
    Timeouts,
    check_runtime,
    env_spec,
    own_interpreter_note,
    resolve_python,
    resolve_timeouts,
)
from envkit.errors import ServerStartError, SpecError, UsageError

pytestmark = pytest.mark.timeout(60)


def _env(root: Path, manifest: str = "name: demo\n") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "openenv.yaml").write_text(manifest)
    return root


def _executable(path: Path, body: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)
    return path


# -- EnvProject.load --------------------------------------------------------------------------


def test_load_the_generated_echo_environment(echo_env: Path) -> None:
    project = EnvProject.load(echo_env)
    assert project.root == echo_env.resolve() and project.root.is_absolute()
    assert project.manifest.name == "echo_env"


def test_load_resolves_relative_and_home_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _env(tmp_path / "env")
    monkeypatch.chdir(env)
    assert EnvProject.load().root == env.resolve()
    assert EnvProject.load(".").root == env.resolve()
    home_env = _env(Path.home() / "envs" / "mine")  # HOME is a temp dir (_isolate)
    assert EnvProject.load("~/envs/mine").root == home_env.resolve()


def test_load_through_a_symlink_gives_the_real_directory(tmp_path: Path) -> None:
    env = _env(tmp_path / "real")
    (tmp_path / "link").symlink_to(env, target_is_directory=True)
    assert EnvProject.load(tmp_path / "link").root == env.resolve()


def test_load_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        EnvProject.load(tmp_path / "nope")
    assert info.value.message == f"{tmp_path / 'nope'} does not exist."
    assert info.value.hint == "Pass the environment's directory."


def test_load_a_file_is_a_usage_error_naming_the_manifest(tmp_path: Path) -> None:
    env = _env(tmp_path / "env")
    with pytest.raises(UsageError) as info:
        EnvProject.load(env / "openenv.yaml")
    assert info.value.message.endswith("openenv.yaml is not a directory.")
    assert info.value.hint == "Pass the directory that holds openenv.yaml."


def test_load_a_directory_without_manifest_points_at_envkit_init(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        EnvProject.load(tmp_path)
    assert "No openenv.yaml in" in info.value.message
    assert "envkit init" in (info.value.hint or "")


@pytest.mark.parametrize(
    ("manifest", "message", "hint"),
    [
        ("- a\n- b\n", "the manifest must be a YAML mapping", "envkit validate --explain EK101"),
        ("name: x\nport: 0\n", "openenv.yaml:2:1: port: Input should be greater", "--static"),
        ("version: 1\n", "name: Field required", "--static"),
        ("name: x\nenvkit:\n  step_timeout_s: -1\n", "openenv.yaml:3:", "--static"),
    ],
)
def test_load_an_invalid_manifest_is_a_located_spec_error(
    tmp_path: Path, manifest: str, message: str, hint: str
) -> None:
    with pytest.raises(SpecError) as info:
        EnvProject.load(_env(tmp_path / "env", manifest))
    assert message in info.value.message
    assert hint in (info.value.hint or "")


def test_load_a_yaml_syntax_error_has_its_location(tmp_path: Path) -> None:
    with pytest.raises(ManifestSyntaxError) as info:
        EnvProject.load(_env(tmp_path / "env", "name: x\nport: [\n"))
    assert info.value.location.line == 3
    assert info.value.hint == "Fix the YAML at that line."


@pytest.mark.timeout(10)
def test_load_a_fifo_manifest_is_refused_without_blocking(tmp_path: Path) -> None:
    env = tmp_path / "env"
    env.mkdir()
    os.mkfifo(env / "openenv.yaml")
    with pytest.raises(SpecError):
        EnvProject.load(env)


@pytest.mark.timeout(10)
def test_load_a_fifo_manifest_says_what_is_wrong(tmp_path: Path) -> None:
    env = tmp_path / "env"
    env.mkdir()
    os.mkfifo(env / "openenv.yaml")
    with pytest.raises(SpecError) as info:
        EnvProject.load(env)
    assert "a FIFO" in info.value.message
    assert "envkit init" not in (info.value.hint or "")


def test_envdir_manifest_and_env_spec(tmp_path: Path) -> None:
    assert EnvDir(tmp_path / "missing").manifest is None
    assert EnvDir(_env(tmp_path / "broken", "name: [\n")).manifest is None
    good = EnvDir(_env(tmp_path / "good", "name: g\nenvkit:\n  step_timeout_s: 3\n")).manifest
    assert good is not None and good.name == "g"
    assert env_spec(good).step_timeout_s == 3.0
    assert env_spec(None) == EnvSpec()


# -- resolve_python -----------------------------------------------------------------------------


def test_resolve_python_falls_back_to_the_running_interpreter(tmp_path: Path) -> None:
    assert resolve_python(tmp_path) == sys.executable


def test_resolve_python_uses_the_project_venv(tmp_path: Path) -> None:
    venv_python = _executable(tmp_path / ".venv" / "bin" / "python")
    assert resolve_python(tmp_path) == str(venv_python)


def test_resolve_python_skips_a_dangling_venv_link(tmp_path: Path) -> None:
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").symlink_to("/nonexistent/python3.11")
    assert resolve_python(tmp_path) == sys.executable


def test_explicit_python_wins_over_the_project_venv(tmp_path: Path) -> None:
    _executable(tmp_path / ".venv" / "bin" / "python")
    other = _executable(tmp_path / "other" / "python")
    assert resolve_python(tmp_path, str(other)) == str(other)
    assert resolve_python(tmp_path, sys.executable) == sys.executable


def test_envkit_own_interpreter_as_fallback_is_named(tmp_path: Path) -> None:
    """No --python and no .venv: envkit serves the environment with its own interpreter,
    which a trainer started elsewhere does not share."""
    note = own_interpreter_note(tmp_path)
    assert note is not None and note.startswith("interpreter: envkit's own interpreter (")
    assert sys.executable in note
    assert "no `.venv` in its folder and no --python was given" in note
    assert "`uv sync`" in note and "--python" in note


def test_no_interpreter_note_for_an_explicit_python_or_a_project_venv(tmp_path: Path) -> None:
    assert own_interpreter_note(tmp_path, sys.executable) is None  # on purpose
    _executable(tmp_path / ".venv" / "bin" / "python")
    assert own_interpreter_note(tmp_path) is None  # the project's venv


def test_explicit_python_by_name_is_looked_up_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _executable(tmp_path / "bin" / "my-python")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.chdir(tmp_path)  # no ./my-python here
    assert resolve_python(tmp_path, "my-python") == str(found)


def test_explicit_python_with_tilde_is_expanded(tmp_path: Path) -> None:
    py = _executable(Path.home() / "py" / "python")
    assert resolve_python(tmp_path, "~/py/python") == str(py)


@pytest.mark.parametrize("kind", ["missing", "not-executable", "directory", "missing-name"])
def test_explicit_python_that_cannot_run_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    plain = tmp_path / "plain"
    plain.write_text("print('hi')\n")
    plain.chmod(0o644)
    given = {
        "missing": str(tmp_path / "nope" / "python"),
        "not-executable": str(plain),
        "directory": str(tmp_path),
        "missing-name": "python-that-is-nowhere",
    }[kind]
    with pytest.raises(UsageError) as info:
        resolve_python(tmp_path, given)
    assert info.value.message == f"--python {given}: no such executable."
    assert "Pass the path of a Python interpreter" in (info.value.hint or "")


def test_empty_python_option_means_not_given(tmp_path: Path) -> None:
    assert resolve_python(tmp_path, "") == sys.executable


# -- check_runtime (real interpreters) -----------------------------------------------------------


def _python_without(tmp_path: Path, keep: tuple[str, ...]) -> Path:
    """A real interpreter that sees only the standard library (``-S``) plus empty stand-in
    packages named ``keep``: the others of openenv/uvicorn/fastapi are missing."""
    stubs = tmp_path / "stubs"
    for name in keep:
        (stubs / name).mkdir(parents=True)
        (stubs / name / "__init__.py").write_text("")
    stubs.mkdir(exist_ok=True)
    return _executable(
        tmp_path / "bin" / "python",
        f'#!/bin/sh\nPYTHONPATH={stubs} exec {sys.executable} -S "$@"\n',
    )


def test_check_runtime_passes_with_the_test_interpreter(tmp_path: Path) -> None:
    check_runtime(sys.executable, tmp_path)  # the test extra installs openenv


def test_check_runtime_names_the_one_missing_module_and_the_install_command(
    tmp_path: Path,
) -> None:
    py = str(_python_without(tmp_path, keep=("openenv", "uvicorn")))
    env = _env(tmp_path / "env")
    with pytest.raises(ServerStartError) as info:
        check_runtime(py, env)
    assert info.value.message == f"{py} cannot import fastapi, which the environment server needs."
    hint = info.value.hint or ""
    assert f"`{py} -m pip install -e {env}`" in hint
    assert f"cd {env} && uv venv && uv pip install -e ." in hint
    assert "--python" in hint


def test_check_runtime_lists_every_missing_module_in_order(tmp_path: Path) -> None:
    py = str(_python_without(tmp_path, keep=()))
    with pytest.raises(ServerStartError) as info:
        check_runtime(py, tmp_path)
    assert "cannot import openenv, uvicorn, fastapi," in info.value.message


def test_check_runtime_on_an_interpreter_that_fails(tmp_path: Path) -> None:
    broken = _executable(tmp_path / "broken", "#!/bin/sh\necho boom >&2\nexit 3\n")
    with pytest.raises(ServerStartError) as info:
        check_runtime(str(broken), tmp_path)
    assert info.value.message == f"{broken} cannot import ?, which the environment server needs."


def test_check_runtime_on_a_missing_interpreter(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-python")
    with pytest.raises(ServerStartError) as info:
        check_runtime(missing, tmp_path)
    assert info.value.message.startswith(f"Cannot run {missing}: ")
    assert info.value.hint == "Pass a working interpreter with --python."


# -- resolve_timeouts ---------------------------------------------------------------------------

SPEC = EnvSpec(step_timeout_s=3.0, startup_timeout_s=40.0)  # defaults: reply 6, startup 40

# (--timeout, --startup-timeout, --reply-timeout) -> (budget_s, startup_s, reply_s)
COMBINATIONS = [
    ((None, None, None), (None, 40.0, 6.0)),
    ((None, 10.0, None), (None, 10.0, 6.0)),
    ((None, None, 1.5), (None, 40.0, 1.5)),
    ((None, 10.0, 1.5), (None, 10.0, 1.5)),
    ((None, 100.0, 100.0), (None, 100.0, 100.0)),  # no budget: nothing clamps
    ((100.0, None, None), (100.0, 40.0, 6.0)),
    ((20.0, None, None), (20.0, 20.0, 6.0)),  # manifest startup clamped to the budget
    ((4.0, None, None), (4.0, 4.0, 4.0)),  # both defaults clamped
    ((100.0, 50.0, None), (100.0, 50.0, 6.0)),
    ((20.0, 50.0, None), (20.0, 20.0, 6.0)),  # an explicit startup is clamped too
    ((100.0, None, 30.0), (100.0, 40.0, 30.0)),
    ((20.0, None, 30.0), (20.0, 20.0, 20.0)),  # an explicit reply is clamped too
    ((100.0, 50.0, 30.0), (100.0, 50.0, 30.0)),
    ((20.0, 50.0, 30.0), (20.0, 20.0, 20.0)),
    ((20.0, 5.0, 2.5), (20.0, 5.0, 2.5)),
]


@pytest.mark.parametrize(("given", "expected"), COMBINATIONS)
def test_resolve_timeouts_combinations(
    given: tuple[float | None, float | None, float | None],
    expected: tuple[float | None, float, float],
) -> None:
    timeout, startup, reply = given
    t = resolve_timeouts(SPEC, timeout_s=timeout, startup_timeout_s=startup, reply_timeout_s=reply)
    assert (t.budget_s, t.startup_s, t.reply_s) == expected


@pytest.mark.parametrize(
    ("step_timeout_s", "reply_s"),
    [(0.1, MIN_REPLY_TIMEOUT_S), (1.0, 2.0), (1.5, 3.0), (30.0, 60.0)],
)
def test_default_reply_is_twice_the_step_budget_but_at_least_two_seconds(
    step_timeout_s: float, reply_s: float
) -> None:
    spec = EnvSpec(step_timeout_s=step_timeout_s)
    assert resolve_timeouts(spec).reply_s == reply_s


def test_a_budget_under_half_a_second_keeps_a_half_second_reply() -> None:
    # The reply floor is 0.5 s even when the whole budget is smaller (the budget still ends
    # the run: callers check the deadline).
    t = resolve_timeouts(SPEC, timeout_s=0.2)
    assert (t.budget_s, t.startup_s, t.reply_s) == (0.2, 0.2, 0.5)
    assert resolve_timeouts(SPEC, timeout_s=0.2, reply_timeout_s=0.3).reply_s == 0.3


def test_resolve_timeouts_reads_the_manifest(tmp_path: Path) -> None:
    manifest = "name: t\nenvkit:\n  step_timeout_s: 4\n  startup_timeout_s: 15\n"
    spec = env_spec(read_manifest(_env(tmp_path / "env", manifest)))
    t = resolve_timeouts(spec)
    assert (t.budget_s, t.startup_s, t.reply_s) == (None, 15.0, 8.0)
    assert resolve_timeouts(spec, timeout_s=10).startup_s == 10.0


def test_resolve_timeouts_reads_the_legacy_validation_keys(tmp_path: Path) -> None:
    manifest = "name: t\nvalidation:\n  step_timeout_s: 0.5\n  startup_timeout_s: 7\n"
    spec = env_spec(read_manifest(_env(tmp_path / "env", manifest)))
    t = resolve_timeouts(spec)
    assert (t.startup_s, t.reply_s) == (7.0, 2.0)


def test_resolve_timeouts_without_a_manifest_uses_the_defaults() -> None:
    t = resolve_timeouts(env_spec(None))
    assert (t.budget_s, t.startup_s, t.reply_s) == (None, 60.0, 10.0)


@pytest.mark.parametrize(
    ("option", "keyword"),
    [
        ("--timeout", "timeout_s"),
        ("--startup-timeout", "startup_timeout_s"),
        ("--reply-timeout", "reply_timeout_s"),
    ],
)
@pytest.mark.parametrize("value", [0, 0.0, -1.0, math.nan])
def test_non_positive_values_are_usage_errors(option: str, keyword: str, value: float) -> None:
    with pytest.raises(UsageError) as info:
        resolve_timeouts(SPEC, **{keyword: value})
    assert info.value.message == f"{option} must be > 0 seconds, got {value!r}."
    assert info.value.hint == f"Pass {option} with a positive number of seconds."


def test_the_first_bad_option_is_reported() -> None:
    with pytest.raises(UsageError, match=r"^--timeout "):
        resolve_timeouts(SPEC, timeout_s=-1, startup_timeout_s=-1, reply_timeout_s=-1)


def test_deadline() -> None:
    assert Timeouts(budget_s=None, startup_s=1, reply_s=1).deadline(100.0) is None
    assert Timeouts(budget_s=7.5, startup_s=1, reply_s=1).deadline(100.0) == 107.5
    with pytest.raises(AttributeError):
        Timeouts(budget_s=1, startup_s=1, reply_s=1).budget_s = 2  # type: ignore[misc]


def test_relative_python_is_taken_from_the_current_directory_and_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Servers start in the environment's directory: a relative `--python` given from
    elsewhere must not be looked up there (it was: an internal FileNotFoundError). The venv's
    symbolic link is kept (resolving it would leave the venv)."""
    real = _executable(tmp_path / "base" / "python3")
    link = tmp_path / "work" / ".venv" / "bin" / "python"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    env = tmp_path / "envs" / "my-env"
    env.mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    assert resolve_python(env, ".venv/bin/python") == str(link)
