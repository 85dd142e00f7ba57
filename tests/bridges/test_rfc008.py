"""envkit.bridges.rfc008: which RFC 008 ids envkit decides, from which codes, and the verdict
one envkit report gives each (no openenv needed)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import envkit.validation.rules  # noqa: F401 - registers every rule
from envkit.bridges.rfc008 import IMPLEMENTED, codes_for, decide, mapping
from envkit.findings import RFC008_LOCAL, RULES, Finding, Severity
from envkit.validation.report import CheckResult, ValidationReport

ROOT = Path(__file__).resolve().parents[2]


def _finding(code: str, severity: Severity, message: str = "m", **data: object) -> Finding:
    return Finding(code, RULES[code].name, severity, message, stage="runtime", data=dict(data))


def _check(code: str, status: str, reason: str = "") -> CheckResult:
    return CheckResult(code, RULES[code].name, "runtime", status, reason)


def test_every_implemented_id_is_a_local_id_with_codes():
    assert len(IMPLEMENTED) == 10
    for check_id in IMPLEMENTED:
        assert check_id in RFC008_LOCAL
        assert codes_for(check_id), check_id


def test_mapping_reads_the_rules_declarations():
    table = mapping()
    assert table["semantic.floor_gap"] == ("EK505",)
    assert table["semantic.canary_floor"] == ("EK505",)
    assert table["runtime.seed_control"] == ("EK413",)
    assert table["semantic.replayability"] == ("EK431",)
    assert "EK419" in table["runtime.episode_isolation"]


def test_entry_points_name_every_grader():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    eps = project["entry-points"]["openenv.validation.graders"]
    assert sorted(eps) == sorted(IMPLEMENTED)
    for check_id, target in eps.items():
        assert target == f"envkit.bridges.openenv_graders:{check_id.split('.')[1]}"


def test_the_docs_list_every_id_and_code():
    text = (ROOT / "docs" / "openenv-validate.md").read_text()
    for check_id, codes in mapping().items():
        assert f"`{check_id}`" in text
        for code in codes:
            assert code in text


def test_an_error_or_warning_finding_fails_with_its_data_as_evidence():
    report = ValidationReport(
        "env",
        findings=[_finding("EK505", Severity.ERROR, "empty scored 1", seed=3, action={"a": 1})],
        checks=[_check("EK505", "failed")],
    )
    d = decide(report, "semantic.floor_gap")
    assert d.status == "fail"
    assert d.evidence[0].startswith("EK505 reward-hackable (error): empty scored 1")
    assert '"seed": 3' in d.evidence[0] and '"action": {"a": 1}' in d.evidence[0]
    warned = ValidationReport(
        "env",
        findings=[_finding("EK413", Severity.WARNING)],
        checks=[_check("EK413", "passed")],
    )
    assert decide(warned, "runtime.seed_control").status == "fail"


def test_a_rule_that_ran_clean_passes():
    report = ValidationReport("env", checks=[_check("EK411", "passed")])
    d = decide(report, "runtime.episode_determinism")
    assert (d.status, d.evidence) == ("pass", ["EK411 reset-not-deterministic: passed"])


def test_no_oracle_is_undecided_not_a_pass():
    report = ValidationReport(
        "env",
        findings=[_finding("EK507", Severity.INFO, "no oracle")],
        checks=[_check("EK506", "skipped", "no oracle"), _check("EK507", "passed")],
    )
    d = decide(report, "semantic.oracle_max")
    assert d.status == "skip"
    assert "EK507" in d.evidence[0]


def test_nothing_evaluated_skips_with_the_reasons():
    report = ValidationReport("env", checks=[_check("EK431", "skipped", "--static was given")])
    d = decide(report, "semantic.replayability")
    assert d.status == "skip"
    assert d.evidence == ["EK431 probe-plan-replay: skipped (--static was given)"]
    assert decide(report, "semantic.verifier_portability").status == "skip"
