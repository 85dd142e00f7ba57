"""`envkit validate` on any OpenEnv 0.10 environment (issue #11 item 4): 0.10's wire is
understood (reset_observation, metadata, production mode, Task API, /mcp), the runtime stage
runs on `openenv init` output and on an unreadable manifest, and a report that ran no runtime
check says so next to PASSED."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envkit.envdir import EnvDir
from envkit.validation import raw_app, validate
from envkit.validation.options import RunOptions
from envkit.validation.report import SCHEMA_PATH, render_json, render_text
from envkit.validation.runtime import RuntimeTarget, run_runtime

V010 = Path(__file__).parent / "envs" / "v010"
WIRE_010 = {"EK424", "EK425", "EK426", "EK427", "EK428"}


def _schema_ok(report) -> None:
    from jsonschema import Draft202012Validator

    schema = json.loads(SCHEMA_PATH.read_text())
    Draft202012Validator(schema).validate(json.loads(render_json(report)))


def test_distinct_reset_observation_and_metadata_give_no_finding(monkeypatch):
    """`reset` returns a type `step` does not (its `instructions` field is forbidden by the
    step observation), with `metadata` in it and at the top level of replies: no EK406."""
    monkeypatch.delenv("OPENENV_MODE", raising=False)
    monkeypatch.delenv("V010_MODE", raising=False)
    out = run_runtime(
        RuntimeTarget(url=None, envdir=EnvDir(V010), python=sys.executable),
        RunOptions(episodes=2),
    )
    # the fixture pays partial credit on every step, so stalling pays: EK513 is its one
    # finding (a reward-design defect; tests/validation/test_rules.py pins it)
    assert [f.code for f in out.findings] == ["EK513"], [(f.code, f.message) for f in out.findings]
    assert {"EK406", "EK415", "EK416", "EK424", "EK425", "EK426", "EK427", "EK428"} <= set(
        out.checks_run
    )


def test_fixture_reset_observation_breaks_the_step_schema():
    """The clean fixture above proves something only if validating its reset observation
    against the `observation` schema would fail."""
    from jsonschema import Draft202012Validator

    sys.path.insert(0, str(V010))
    try:
        from models import V010Observation, V010ResetObservation
    finally:
        sys.path.remove(str(V010))
    obs = V010ResetObservation(target="amber", instructions="x").model_dump(
        exclude={"reward", "done"}
    )
    errors = list(Draft202012Validator(V010Observation.model_json_schema()).iter_errors(obs))
    assert errors and "instructions" in errors[0].message


def test_production_harness_is_not_applicable_not_broken(monkeypatch):
    """Production mode whose `/ws` cannot reset (a harness environment): info findings only."""
    monkeypatch.setenv("OPENENV_MODE", "production")
    monkeypatch.setenv("V010_MODE", "reset_fails")
    out = run_runtime(
        RuntimeTarget(url=None, envdir=EnvDir(V010), python=sys.executable),
        RunOptions(episodes=1),
    )
    assert {f.code for f in out.findings} == {"EK426"}, [(f.code, f.message) for f in out.findings]
    assert all(f.severity.value == "info" for f in out.findings)
    assert any("episode checks not applicable" in f.message for f in out.findings)
    assert "EK418" not in {f.code for f in out.findings}


@pytest.fixture(scope="module")
def openenv_init_010(tmp_path_factory) -> Path:
    parent = tmp_path_factory.mktemp("oi010")
    openenv = Path(sys.executable).parent / "openenv"
    subprocess.run(
        [str(openenv), "init", "oi_env"], cwd=parent, check=True, capture_output=True, timeout=180
    )
    return parent / "oi_env"


def test_openenv_init_010_gets_its_runtime_stage(openenv_init_010: Path):
    """The full runtime stage runs; the only errors are the template's real defects
    (`done` never true: EK414; the reward pays length: EK505)."""
    report = validate(openenv_init_010, python=sys.executable, episodes=2)
    assert report.runtime.ran and report.runtime_ran and not report.runtime.assumptions
    runtime_errors = {f.code for f in report.errors if f.stage == "runtime"}
    assert runtime_errors == {"EK414", "EK505"}, [(f.code, f.message) for f in report.errors]
    codes = {f.code for f in report.findings}
    assert not codes & (WIRE_010 | {"EK403", "EK405", "EK406", "EK415", "EK416"})
    ran = {c.code for c in report.checks if c.status != "skipped"}
    assert WIRE_010 - {"EK426"} <= ran  # mode, /mcp and the Task API were checked
    _schema_ok(report)


def test_invalid_manifest_still_plays_and_says_what_it_assumed(
    openenv_init_010: Path, tmp_path: Path
):
    env = tmp_path / "typo_env"
    shutil.copytree(openenv_init_010, env)
    yaml = env / "openenv.yaml"
    text = yaml.read_text()
    assert "    range: [0.0, 1.0]" in text
    yaml.write_text(text.replace("    range: [0.0, 1.0]", "    rnage: [0.0, 1.0]"))

    report = validate(env, python=sys.executable, episodes=1)
    assert any(
        f.code.startswith("EK1") and f.severity.value == "error" for f in report.findings
    )  # the typo is reported
    assert report.runtime.ran and report.runtime_ran
    said = "\n".join(report.runtime.assumptions)
    assert "`server.app:app` from openenv.yaml's `app` key" in said
    assert "reward range [0, 1] (the default" in said and "no oracle" in said
    assert {"EK414", "EK505"} <= {f.code for f in report.errors}  # played, found
    assert "EK507" not in {f.code for f in report.findings}  # the oracle is unknown, not absent
    text_out = render_text(report)
    assert "The runtime stage ran without a readable manifest and assumed:" in text_out
    assert json.loads(render_json(report))["runtime"]["assumptions"] == report.runtime.assumptions
    _schema_ok(report)


def test_static_only_pass_says_so():
    report = validate(V010, static=True, select=["EK4"])
    assert report.passed and not report.runtime_ran
    line = render_text(report).strip().splitlines()[-1]
    assert line.startswith(
        "PASSED (static checks only: the runtime stage did not run because --static was given)"
    ), line
    data = json.loads(render_json(report))
    assert data["runtime"] == {
        "ran": False,
        "reason": "--static was given",
        "assumptions": [],
        "launch": None,
        "notes": [],
        "out_of_time": [],
    }
    _schema_ok(report)


def test_runtime_that_ran_has_plain_verdict(tmp_path):
    """Not every verdict is qualified: a report whose runtime ran says PASSED plainly."""
    from envkit.validation.report import CheckResult, ValidationReport

    report = ValidationReport(
        "x", checks=[CheckResult("EK402", "health-endpoint-broken", "runtime", "passed")]
    )
    assert render_text(report).strip().splitlines()[-1].startswith("PASSED: 0 errors")


def test_raw_app_fallbacks(tmp_path):
    (tmp_path / "openenv.yaml").write_text("name: x\napp: my_pkg.server:api\nvalidation: 3\n")
    assert raw_app(tmp_path)[0] == "my_pkg.server:api"
    (tmp_path / "openenv.yaml").write_text("name: [unclosed\n")
    assert raw_app(tmp_path) == (None, raw_app(tmp_path)[1])
    assert "no server/app.py" in raw_app(tmp_path)[1]
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "app.py").write_text("")
    assert raw_app(tmp_path)[0] == "server.app:app"


def test_no_app_to_start_is_not_silent(tmp_path):
    (tmp_path / "openenv.yaml").write_text("name: [unclosed\n")
    report = validate(tmp_path, episodes=1)
    assert not report.runtime_ran
    assert "no server/app.py to start" in (report.static_only_reason or "")
    last = render_text(report).strip().splitlines()[-1]
    assert "static checks only: the runtime stage did not run because" in last
