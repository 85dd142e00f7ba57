"""The training-path lane of `envkit validate` (EK7xx) on a real guess environment: its own
venv (openenv, pytest, transformers for the tool schemas), its own server on 127.0.0.1, the
adapter built and played as TRL 1.16 does. Each test breaks one file the way a renamed model
or a stale import does, checks that validate fails with a finding located in that file, then
restores the file and checks that validate passes again."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from envkit.validation import validate
from envkit.validation.lanes.training import TrainPathOutcome, TrainPathTarget, _read_driver
from tests.helpers import descendants
from tests.templates.conftest import BuiltEnv, _uv, build_env

pytestmark = pytest.mark.timeout(900)
slow = pytest.mark.slow  # builds a venv and starts servers

# The runtime stage (EK4xx, EK5xx) is left out: these tests are about the training path, and
# the lane starts its own server either way.
NO_RUNTIME = ["EK4", "EK5"]
TRANSFORMERS_SPEC = "transformers>=5.13"  # TRL 1.16's tool parsing without jmespath


@pytest.fixture(scope="module")
def guess_env(tmp_path_factory: pytest.TempPathFactory) -> BuiltEnv:
    """A guess environment with its venv (the shared template venv cache) plus transformers,
    so the tools' JSON schemas are checked too."""
    env = build_env(tmp_path_factory.mktemp("train-path"), "guess")
    subprocess.run(
        [_uv(), "pip", "install", "-q", "--python", env.python, TRANSFORMERS_SPEC],
        check=True,
        timeout=600,
    )
    return env


@pytest.fixture
def env(guess_env: BuiltEnv) -> Iterator[Path]:
    """The guess environment; every file a test edits is restored afterwards."""
    root = guess_env.path
    saved = {
        p: p.read_text()
        for p in (
            root / "trl_env.py",
            root / "inference.py",
            root / "tests" / "test_environment.py",
        )
    }
    try:
        yield root
    finally:
        for path, text in saved.items():
            path.write_text(text)


def _edit(path: Path, old: str, new: str) -> int:
    """Replace ``old`` (a regular expression, exactly one match) in ``path``; the 1-based line
    of the replacement."""
    text = path.read_text()
    found = list(re.finditer(old, text, re.MULTILINE))
    assert len(found) == 1, (old, path)
    path.write_text(text[: found[0].start()] + new + text[found[0].end() :])
    return text.count("\n", 0, found[0].start()) + 1


def _train_findings(root: Path) -> tuple[object, dict[str, object]]:
    report = validate(root, ignore=NO_RUNTIME)
    checks = {c.code: c for c in report.checks if c.code.startswith("EK7")}
    return report, checks


@slow
def test_clean_guess_environment_passes_every_training_check(env: Path) -> None:
    before = descendants(os.getpid())
    report, checks = _train_findings(env)
    assert report.passed, [(f.code, f.message) for f in report.findings]
    assert [f for f in report.findings if f.code.startswith("EK7")] == []
    assert {c.code: c.status for c in checks.values()} == dict.fromkeys(
        ["EK701", "EK702", "EK703", "EK704", "EK705", "EK706", "EK707"], "passed"
    )
    assert report.timings["train_path"] > 0
    assert descendants(os.getpid()) <= before  # the server and the child are gone


def _servers_seen(**options) -> tuple[object, set[int], list[str]]:
    """``validate(**options)``; its report, the PIDs of the uvicorn servers among this
    process's descendants that appeared during the run (sampled every 50 ms: a server lives
    for seconds; those of other fixtures, already running, do not count), and its progress
    lines."""
    seen: set[int] = set()
    lines: list[str] = []
    done = threading.Event()

    def servers() -> set[int]:
        found = set()
        for pid in descendants(os.getpid()):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"\x00-m\x00uvicorn\x00" in cmdline:  # `python -m uvicorn APP ...`
                found.add(pid)
        return found

    already = servers()

    def sample() -> None:
        while not done.wait(0.05):
            seen.update(servers() - already)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        report = validate(options.pop("root"), progress=lines.append, **options)
    finally:
        done.set()
        sampler.join()
    return report, seen, lines


@slow
def test_full_validate_plays_the_lane_on_the_runtime_stages_server(env: Path) -> None:
    """With the runtime stage, the lane plays the server that stage started instead of
    starting one of its own, and it starts before that stage plays (its imports overlap)."""
    report, servers, lines = _servers_seen(root=env)
    assert report.passed, [(f.code, f.message) for f in report.findings]
    statuses = {c.code: c.status for c in report.checks if c.code.startswith("EK7")}
    assert set(statuses.values()) == {"passed"}, statuses
    _, without_lane, _ = _servers_seen(root=env, train_path=False)
    assert len(servers) == len(without_lane), (servers, without_lane)
    lane = next(i for i, line in enumerate(lines) if line.startswith("training path"))
    assert lane < len(lines) - 1 and not lines[lane + 1].startswith("training path"), lines
    # without the runtime stage the lane starts (and stops) a server of its own
    _, own, _ = _servers_seen(root=env, ignore=NO_RUNTIME)
    assert len(own) == 1, own


@slow
def test_adapter_importing_a_name_models_lack_fails_in_trl_env(env: Path, cli) -> None:
    line = _edit(
        env / "trl_env.py",
        r"^from \.models import HIGH, LOW, ",
        "from .models import HIGH, LOW, MAX_GUESSES, ",
    )
    result = cli("validate", env, "--ignore", "EK4,EK5", "--format", "json")
    assert result.exit_code == 1, result.output
    [finding] = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "EK701"]
    assert finding["severity"] == "error"
    assert finding["location"] == {"file": "trl_env.py", "line": line, "column": None}
    assert "ImportError" in finding["message"] and "MAX_GUESSES" in finding["message"]
    assert "from .models import HIGH, LOW, MAX_GUESSES" in finding["message"]  # the frame's text

    _edit(env / "trl_env.py", r"MAX_GUESSES, ", "")
    assert cli("validate", env, "--ignore", "EK4,EK5").exit_code == 0


@slow
def test_tool_building_an_action_with_an_unknown_field_fails_in_trl_env(env: Path) -> None:
    line = _edit(env / "trl_env.py", r"\(guess=number\)", "(guess=number, hint=True)")
    report, checks = _train_findings(env)
    assert not report.passed
    [finding] = [f for f in report.errors if f.code == "EK703"]
    assert str(finding.location) == f"trl_env.py:{line}"
    assert "tool `guess`" in finding.message and "ValidationError" in finding.message
    assert "hint=True" in finding.message
    assert checks["EK704"].status == "skipped"  # the episode never ended

    _edit(env / "trl_env.py", r", hint=True", "")
    assert _train_findings(env)[0].passed


@slow
def test_reward_other_than_the_wire_is_reported_at_get_reward(env: Path) -> None:
    _edit(env / "trl_env.py", r"return self\._reward$", "return self._reward + 0.5")
    report, _ = _train_findings(env)
    [finding] = [f for f in report.errors if f.code == "EK704"]
    text = (env / "trl_env.py").read_text().splitlines()
    assert finding.location is not None and finding.location.file == "trl_env.py"
    assert text[finding.location.line - 1].strip().startswith("def get_reward")
    assert "1.5" in finding.message and "1.0" in finding.message


@slow
def test_tool_without_args_docstring_has_no_schema(env: Path) -> None:
    _edit(env / "trl_env.py", r"\n        Args:\n            number: [^\n]*\n", "\n")
    report, _ = _train_findings(env)
    [finding] = [f for f in report.errors if f.code == "EK702"]
    assert str(finding.location).startswith("trl_env.py:") and "tool `guess`" in finding.message


@slow
def test_reset_text_glued_to_the_prompt_is_a_warning(env: Path) -> None:
    _edit(env / "trl_env.py", r'return "\\n\\n" \+ self\._prompt', "return self._prompt")
    report, _ = _train_findings(env)
    assert report.passed  # a warning
    [finding] = [f for f in report.warnings if f.code == "EK707"]
    assert finding.location is not None and finding.location.file == "trl_env.py"
    assert "'Play.Guess the number" in finding.message


@slow
def test_broken_inference_script_fails_in_inference(env: Path) -> None:
    line = _edit(env / "inference.py", r"^import os$", "import os\nfrom models import NoSuchModel")
    report, _ = _train_findings(env)
    [finding] = [f for f in report.errors if f.code == "EK705"]
    assert str(finding.location) == f"inference.py:{line + 1}"
    assert "NoSuchModel" in finding.message

    _edit(env / "inference.py", r"^from models import NoSuchModel\n", "")
    assert _train_findings(env)[0].passed


@slow
def test_tests_that_do_not_collect_fail_in_the_test_module(env: Path) -> None:
    test_file = env / "tests" / "test_environment.py"
    line = _edit(test_file, r"^from models import ", "from models import NO_SUCH_NAME, ")
    report, _ = _train_findings(env)
    [finding] = [f for f in report.errors if f.code == "EK706"]
    assert str(finding.location) == f"tests/test_environment.py:{line}"
    assert "NO_SUCH_NAME" in finding.message

    _edit(test_file, r"NO_SUCH_NAME, ", "")
    assert _train_findings(env)[0].passed


@slow
def test_a_declared_dependency_missing_from_the_interpreter_skips_the_lane(env: Path) -> None:
    """Without the environment's own dependencies in the interpreter (no venv yet, or
    envkit's own), import errors would be the machine's: the lane says so and reports no
    EK7xx finding."""
    pyproject = env / "pyproject.toml"
    saved = pyproject.read_text()
    try:
        _edit(pyproject, r'"openenv>=', '"envkit-surely-absent-dist>=1",\n    "openenv>=')
        report, checks = _train_findings(env)
    finally:
        pyproject.write_text(saved)
    assert [f for f in report.findings if f.code.startswith("EK7")] == []
    reasons = {c.reason for c in checks.values()}
    assert len(reasons) == 1 and "`envkit-surely-absent-dist`" in reasons.pop()
    assert {c.status for c in checks.values()} == {"skipped"}


@slow
def test_no_train_path_skips_the_lane(env: Path, cli) -> None:
    _edit(env / "inference.py", r"^import os$", "import os\nfrom models import NoSuchModel")
    result = cli("validate", env, "--ignore", "EK4,EK5", "--no-train-path", "--format", "json")
    assert result.exit_code == 0, result.output
    assert '"reason": "--no-train-path was given"' in result.output


def test_a_hung_step_is_a_finding_on_that_step(tmp_path: Path) -> None:
    """The driver's lines up to a hang in `inference.py`'s import (killed at the lane's time
    limit): the finding names that step and file; the steps after it say they were not
    reached."""
    (tmp_path / "trl_env.py").write_text("")
    target = TrainPathTarget(tmp_path, "python3", None, "server.app:app", None)
    lines = (
        '{"at": "package"}\n{"at": "client"}\nnoise the environment printed\n{"at": "inference"}\n'
    )
    outcome = TrainPathOutcome()
    _read_driver(target, lines, True, outcome)
    [finding] = outcome.findings
    assert finding.code == "EK705" and str(finding.location) == "inference.py"
    assert "time limit" in finding.message
    assert outcome.ran == {"EK705"}
    assert outcome.skipped["EK701"].startswith("not reached")


def test_environment_without_adapter_skips_the_lane_and_says_why(clean_env: Path) -> None:
    from envkit.validation.report import NO_TRL_ADAPTER

    report = validate(clean_env, ignore=NO_RUNTIME)
    training = [c for c in report.checks if c.stage == "training"]
    assert len(training) == 7
    assert {(c.status, c.reason) for c in training} == {("skipped", NO_TRL_ADAPTER)}
    assert "train_path" not in report.timings


@slow
def test_url_lane_plays_the_adapter_against_that_server(env: Path, guess_env: BuiltEnv) -> None:
    from envkit.envdir.manifest import read_manifest
    from envkit.server import start_server

    server = start_server(env, read_manifest(env).app, python=guess_env.python)
    try:
        server.wait_healthy(timeout_s=120)
        _edit(env / "trl_env.py", r"return self\._reward$", "return -self._reward")
        report = validate(env, url=server.url, ignore=NO_RUNTIME)
    finally:
        server.stop()
    [finding] = [f for f in report.errors if f.code == "EK704"]
    assert "-1.0" in finding.message
    assert report.lane == "url"
