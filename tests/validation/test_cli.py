"""`envkit validate` / `envkit rules` as users run them: exit codes, select/ignore, config,
--exit-zero, --output, --explain, and an environment made by `openenv init`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envkit.validation import validate


def _break_port(root: Path) -> None:
    text = (root / "openenv.yaml").read_text().replace("port: 8000", "port: 80000")
    (root / "openenv.yaml").write_text(text)


def _codes(result) -> list[str]:
    return [f["code"] for f in json.loads(result.stdout)["findings"]]


def test_clean_env_exits_zero(cli, clean_env: Path) -> None:
    result = cli("validate", clean_env, "--static")
    assert result.exit_code == 0, result.output
    assert (
        "PASSED (static checks only: the runtime stage did not run because --static "
        "was given): 0 errors, 0 warnings, 0 infos"
    ) in result.stdout


def test_error_exits_one_and_exit_zero_overrides(cli, clean_env: Path) -> None:
    _break_port(clean_env)
    assert cli("validate", clean_env, "--static").exit_code == 1
    result = cli("validate", clean_env, "--static", "--exit-zero")
    assert result.exit_code == 0
    assert "EK107" in result.stdout


def test_select_and_ignore_by_prefix(cli, clean_env: Path) -> None:
    _break_port(clean_env)
    (clean_env / "inference.py").unlink()
    both = _codes(cli("validate", clean_env, "--static", "-f", "json", "--exit-zero"))
    assert both == ["EK107", "EK209"]
    assert _codes(cli("validate", clean_env, "--static", "-f", "json", "--select", "EK2")) == [
        "EK209"
    ]
    result = cli("validate", clean_env, "--static", "-f", "json", "--ignore", "EK1")
    assert result.exit_code == 0 and _codes(result) == ["EK209"]
    # the more specific prefix wins (ruff semantics)
    assert _codes(
        cli(
            "validate",
            clean_env,
            "--static",
            "-f",
            "json",
            "--exit-zero",
            "--select",
            "EK107,EK2",
            "--ignore",
            "EK1",
        )
    ) == ["EK107", "EK209"]


def test_pyproject_config_ignore_and_severity(cli, clean_env: Path) -> None:
    _break_port(clean_env)
    (clean_env / "inference.py").unlink()
    pyproject = clean_env / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            "[tool.envkit.validate]\nignore = []",
            '[tool.envkit.validate]\nignore = ["EK209"]\nseverity = { EK107 = "warning" }',
        )
    )
    result = cli("validate", clean_env, "--static", "-f", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [(f["code"], f["severity"]) for f in data["findings"]] == [("EK107", "warning")]
    # the command line's --select replaces the file's select, --ignore adds to its ignore
    result = cli("validate", clean_env, "--static", "-f", "json", "--ignore", "EK107")
    assert _codes(result) == []


@pytest.mark.parametrize(
    "table, needle",
    [
        ('ignore = ["EK199"]', "unknown rule code EK199"),
        ('severity = { EK107 = "fatal" }', "is not a severity"),
        ('selct = ["EK1"]', "unknown key"),
    ],
)
def test_bad_config_exits_two(cli, clean_env: Path, table: str, needle: str) -> None:
    pyproject = clean_env / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("ignore = []", table))
    result = cli("validate", clean_env, "--static")
    assert result.exit_code == 2
    assert needle in result.stderr and result.stdout == ""


def test_bad_cli_code_exits_two(cli, clean_env: Path) -> None:
    result = cli("validate", clean_env, "--static", "--select", "EK9")
    assert result.exit_code == 2 and "not a rule code" in result.stderr
    result = cli("validate", clean_env, "--static", "--format", "xml")
    assert result.exit_code == 2


def test_output_file_is_written_atomically(cli, clean_env: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.xml"
    result = cli("validate", clean_env, "--static", "-f", "junit", "-o", out)
    assert result.exit_code == 0
    assert result.stdout == ""
    assert out.read_text().startswith("<?xml")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    result = cli("validate", clean_env, "--static", "-o", tmp_path / "missing" / "r.txt")
    assert result.exit_code == 2 and "Cannot write" in result.stderr


def test_explain_and_rules(cli) -> None:
    result = cli("validate", "--explain", "EK305")
    assert result.exit_code == 0
    for heading in ("What it checks", "Why it matters", "Example", "Fix"):
        assert heading in result.stdout
    result = cli("validate", "--explain", "EK3O5")
    assert result.exit_code == 2 and "unknown rule" in result.stderr
    rules = json.loads(cli("rules", "--format", "json").stdout)
    assert {"EK101", "EK213", "EK310", "EK605"} <= {r["code"] for r in rules}
    assert all(set(r) >= {"code", "name", "severity", "summary"} for r in rules)
    assert "EK101" in cli("rules").stdout


def test_missing_path_exits_two(cli, tmp_path: Path) -> None:
    result = cli("validate", tmp_path / "nope", "--static")
    assert result.exit_code == 2 and "does not exist" in result.stderr


def test_empty_directory_is_not_an_environment(cli, tmp_path: Path) -> None:
    # Refused before any check runs (exit 2, nothing scanned), not reported as EK101.
    result = cli("validate", tmp_path, "--static", "-f", "json")
    assert result.exit_code == 2
    assert "no openenv.yaml" in result.stderr and result.stdout == ""


def test_openenv_init_environment(openenv_init_env: Path) -> None:
    """`openenv init`'s template as shipped (0.10): its known defects, nothing else; its RFC
    008 manifest is valid (issue #11: no false EK109), only schema 1 (EK120, a warning)."""
    report = validate(openenv_init_env, static=True)
    got = sorted({f.code for f in report.findings})
    assert got == [
        "EK120",
        "EK209",
        "EK210",
        "EK211",
        "EK302",
        "EK305",
        "EK306",
        "EK308",
        "EK310",
        "EK604",
        "EK605",
    ], [(f.code, f.message) for f in report.findings]
    assert not [f for f in report.findings if f.severity.value == "error"]
    assert report.passed  # warnings and infos only: it serves, it is just not ready to ship


def test_select_static_family_never_starts_a_server(clean_env: Path) -> None:
    report = validate(clean_env, select=["EK1"])  # no --static: the selection decides
    assert "startup" not in report.timings and "runtime" not in report.timings
    runtime = [c for c in report.checks if c.stage == "runtime"]
    assert runtime and all(c.status == "skipped" for c in runtime)
    assert report.summary["checks_run"] == 23  # EK101-EK123


def test_url_only_runs_runtime_checks(cli, echo_server) -> None:
    result = cli("validate", "--url", echo_server.url, "--episodes", "1", "-f", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["target"] == echo_server.url and data["passed"] is True
    assert data["summary"]["checks_run"] > 0
    assert "static" not in data["timings"]


def test_path_and_url_run_both_stages(clean_env: Path, echo_server) -> None:
    (clean_env / "inference.py").unlink()  # a static finding proves the static stage ran
    report = validate(clean_env, url=echo_server.url, episodes=1)
    assert report.target == f"{clean_env.resolve()} @ {echo_server.url}"
    assert [f.code for f in report.findings] == ["EK209"]
    stages = {c.stage for c in report.checks if c.status != "skipped"}
    assert stages == {"static", "runtime"}


@pytest.mark.parametrize("code", ["EK7", "EK707"])
def test_training_path_codes_can_be_selected_and_ignored(cli, clean_env: Path, code: str) -> None:
    """Every family of the rule table is selectable, the training path's (EK7xx) included."""
    for option in ("--select", "--ignore"):
        result = cli("validate", clean_env, "--static", option, code)
        assert result.exit_code == 0, result.output
