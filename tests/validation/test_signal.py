"""Signal over noise and the RFC 008 map (issue #13 items 4 and 5).

Folding: the text report leads with behaviour findings (EK4xx/EK5xx), folds generic hygiene
warnings into one line per family unless ``--show-all``; JSON/GitHub keep every finding.
In-repo environments (OpenEnv's ``envs/NAME`` layout) are not nagged about `.gitignore` or
`server/Dockerfile`. Every rule names its RFC 008 check id; ``envkit rules --rfc008`` maps
the 34 local-lane ids, checked here against the installed openenv 0.10 wheel.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from envkit.findings import (
    RFC008_HUB,
    RFC008_LOCAL,
    RFC008_OPENENV_010,
    RULES,
    Location,
    Severity,
    register,
)
from envkit.validation import validate
from envkit.validation.report import CheckResult, ValidationReport, render

#: `openenv init` 0.10's findings that are generic layout warnings (tests/validation/test_cli.py
#: pins the full set: these plus EK120 and EK211).
INIT_HYGIENE = ["EK209", "EK210", "EK302", "EK305", "EK306", "EK308", "EK310", "EK604", "EK605"]


def _codes_in(text: str) -> set[str]:
    import re

    return set(re.findall(r"EK\d{3}", text))


# -- folding ----------------------------------------------------------------------------------
def test_openenv_init_hygiene_is_folded_and_show_all_expands(openenv_init_env: Path, cli) -> None:
    report = validate(openenv_init_env, static=True)
    assert sorted({f.code for f in report.findings if f.hygiene}) == INIT_HYGIENE
    text = render(report, "text")
    folded_at = text.index("hygiene findings folded")
    # the two non-hygiene warnings are listed in full before the folded block
    assert text.index("EK120 validation-execution-missing") < folded_at
    assert text.index("EK211 capacity-one") < folded_at
    # one line per family with a count, no message of a folded finding
    block = text[folded_at:].split("\n\n", 1)[0].splitlines()[1:]
    assert [line.split()[0] for line in block] == ["project", "dockerfile", "deployment"]
    n_docker = sum(1 for f in report.findings if f.hygiene and f.code.startswith("EK3"))
    assert n_docker >= 5 and block[1].split()[1] == f"{n_docker}:"
    assert "Expected a `.gitignore`" not in text
    n_hyg = sum(1 for f in report.findings if f.hygiene)
    assert f"{n_hyg} hygiene findings folded" in text
    # the summary still counts every finding
    assert f"{len(report.warnings)} warnings" in text

    full = render(report, "text", show_all=True)
    assert "folded" not in full and "Expected a `.gitignore`" in full
    # every finding shown (the skipped checks follow, listed with their reasons)
    findings_part = full.split("\nSkipped (", 1)[0]
    assert "\nSkipped (" in full
    assert _codes_in(findings_part) == {f.code for f in report.findings}

    result = cli("validate", openenv_init_env, "--static", "--show-all")
    assert result.exit_code == 0 and "Expected a `.gitignore`" in result.stdout
    result = cli("validate", openenv_init_env, "--static")
    assert result.exit_code == 0 and "Expected a `.gitignore`" not in result.stdout
    assert "--show-all" in result.stdout


def test_machine_formats_keep_every_finding(openenv_init_env: Path) -> None:
    import jsonschema

    from envkit.validation.report import SCHEMA_PATH

    report = validate(openenv_init_env, static=True)
    data = json.loads(render(report, "json"))
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text()))
    assert len(data["findings"]) == len(report.findings)
    assert sorted({f["code"] for f in data["findings"] if f["hygiene"]}) == INIT_HYGIENE
    assert {f["code"]: f["rfc008"] for f in data["findings"]}[
        "EK305"
    ] == "static.reproducible_build"
    gh = render(report, "github")
    assert sum(1 for line in gh.splitlines() if "title=EK" in line) == len(report.findings)


def _finding(code: str, message: str = "m", **kw):
    return RULES[code].finding(message, **kw)


def test_behaviour_findings_lead_and_errors_are_never_folded() -> None:
    import envkit.validation.rules  # noqa: F401 - registers every rule

    hyg_error = _finding(
        "EK305", "regraded", location=Location("Dockerfile", 1, 1), severity=Severity.ERROR
    )
    report = ValidationReport(
        target="t",
        findings=[
            _finding("EK107", "bad port", location=Location("openenv.yaml", 7, 1)),
            _finding("EK604", location=Location(".gitignore")),
            _finding("EK605", location=Location(".dockerignore")),
            _finding("EK413", "seed ignored"),
            _finding("EK503", "reward 20"),
            hyg_error,
        ],
    )
    text = render(report, "text")
    # behaviour (runtime, EK4/EK5) before static files, even before the static error
    assert text.index("EK503") < text.index("EK107") and text.index("EK413") < text.index("EK107")
    # a hygiene rule re-graded to error is shown in full
    assert "regraded" in text and text.index("EK305") < text.index("folded")
    assert "deployment  2: EK604 gitignore-missing, EK605 dockerignore-missing" in text


def test_folded_counts_repeated_rule() -> None:
    import envkit.validation.rules  # noqa: F401

    report = ValidationReport(
        target="t",
        findings=[_finding("EK306", location=Location("Dockerfile", n, 1)) for n in (1, 5, 9)],
    )
    text = render(report, "text")
    assert "dockerfile  3: EK306 buildkit-only-syntax x3" in text
    assert "No findings." not in text


# -- in-repo environments ---------------------------------------------------------------------
@pytest.fixture
def in_repo(clean_env: Path, tmp_path: Path) -> Path:
    """repo/.git, repo/.gitignore, repo/envs/echo_env: the generated environment without its
    own .gitignore and with its Dockerfile under server/ (OpenEnv's in-repo layout)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".gitignore").write_text(".venv/\n__pycache__/\n.env\n")
    env = repo / "envs" / "echo_env"
    env.parent.mkdir()
    shutil.copytree(clean_env, env)
    (env / ".gitignore").unlink()
    (env / "Dockerfile").rename(env / "server" / "Dockerfile")
    yaml = env / "openenv.yaml"
    yaml.write_text(
        yaml.read_text().replace("dockerfile: Dockerfile", "dockerfile: server/Dockerfile")
    )
    return env


def test_in_repo_environment_is_not_nagged(in_repo: Path, cli) -> None:
    report = validate(in_repo, static=True)
    assert report.findings == [], [(f.code, f.message) for f in report.findings]
    skipped = {c.code: c.reason for c in report.checks if c.status == "skipped"}
    assert skipped["EK604"].startswith("in-repo environment: `../../.gitignore`")
    assert skipped["EK302"].startswith("in-repo environment (repository at `../..`)")
    text = render(report, "text")
    assert "Not checked here:" in text and "EK604 gitignore-missing: in-repo" in text
    result = cli("validate", in_repo, "--static", "--format", "junit")
    assert "EK302 dockerfile-not-at-root" in result.stdout and "in-repo" in result.stdout


def test_same_layout_outside_a_repository_is_reported(in_repo: Path) -> None:
    repo = in_repo.parents[1]
    shutil.rmtree(repo / ".git")
    (repo / ".gitignore").unlink()
    report = validate(in_repo, static=True)
    assert {f.code for f in report.findings} == {"EK302", "EK604"}


def test_parent_gitignore_without_git_marks_a_repository(in_repo: Path) -> None:
    shutil.rmtree(in_repo.parents[1] / ".git")  # an exported copy of the repository
    report = validate(in_repo, static=True)
    assert not report.findings


def test_repository_without_gitignore_still_needs_one(in_repo: Path) -> None:
    (in_repo.parents[1] / ".gitignore").unlink()
    report = validate(in_repo, static=True)
    assert [f.code for f in report.findings] == ["EK604"]  # server/Dockerfile is fine


def test_environment_with_its_own_git_is_standalone(in_repo: Path) -> None:
    (in_repo / ".git").mkdir()
    report = validate(in_repo, static=True)
    assert {f.code for f in report.findings} == {"EK302", "EK604"}


def test_home_gitignore_is_not_a_repository(in_repo: Path, monkeypatch) -> None:
    """~/.gitignore is often a global excludes file, not a repository."""
    repo = in_repo.parents[1]
    shutil.rmtree(repo / ".git")
    monkeypatch.setenv("HOME", str(repo))
    report = validate(in_repo, static=True)
    assert {f.code for f in report.findings} == {"EK302", "EK604"}


# -- RFC 008 ----------------------------------------------------------------------------------
def _openenv_policy() -> dict:
    import importlib.resources

    path = importlib.resources.files("openenv.validation") / "policies" / "severity-v2.json"
    return json.loads(path.read_text())


def test_rfc008_ids_match_openenv_010_policy_and_graders() -> None:
    entries = _openenv_policy()["entries"]
    assert list(RFC008_LOCAL) == [e["check_id"] for e in entries if e["lane"] == "local"]
    assert len(RFC008_LOCAL) == 34
    assert set(RFC008_HUB) == {e["check_id"] for e in entries if e["lane"] == "hub"}
    from openenv.validation.graders import runtime, static

    graded = {g.check_id for mod in (runtime, static) for g in map(mod.__dict__.get, mod.__all__)}
    assert graded | {"runtime.startup"} == RFC008_OPENENV_010  # startup: the runner itself


def test_every_rule_carries_a_valid_rfc008_id_or_none() -> None:
    import envkit.validation.rules  # noqa: F401

    for rule in RULES.values():
        assert rule.rfc008 is None or rule.rfc008 in RFC008_LOCAL + RFC008_HUB, rule.code
    by_code = {c: r.rfc008 for c, r in RULES.items()}
    assert by_code["EK413"] == "runtime.seed_control"
    assert by_code["EK505"] == "semantic.floor_gap"
    # issue #13 item 5: the local-lane ids OpenEnv reserves but does not run
    assert by_code["EK412"] == "semantic.verifier_determinism"
    assert by_code["EK431"] == "semantic.replayability"
    assert by_code["EK512"] == by_code["EK509"] == "semantic.no_solution_leakage"
    assert by_code["EK503"] == "runtime.reward_well_formed"
    assert RULES["EK503"].finding("x").to_dict()["rfc008"] == "runtime.reward_well_formed"
    assert RULES["EK604"].hygiene and not RULES["EK503"].hygiene


def _register_test_rule(code: str, **extra: object) -> None:
    """``register`` a throw-away rule ``code`` with one-letter documentation and ``extra``."""
    docs = {"summary": "s", "what": "w", "why": "y", "example": "e", "fix": "f"}
    register(code, f"test-only-{code.lower()}", Severity.INFO, **docs, **extra)


def test_register_refuses_an_unknown_rfc008_id() -> None:
    with pytest.raises(ValueError, match="not an RFC 008 check id"):
        _register_test_rule("EK699", rfc008="runtime.seed_controll")
    assert "EK699" not in RULES


@pytest.mark.parametrize(
    ("reported_as", "limits", "message"),
    [(("EK69",), "l", "reported_as holds"), (("EK698",), "l", "reported_as holds"),
     (("EK509",), "", "needs limits")],
)  # fmt: skip
def test_register_refuses_a_reported_as_it_cannot_explain(reported_as, limits, message) -> None:
    """``reported_as`` names well-formed other codes, and the limits say when."""
    with pytest.raises(ValueError, match=message):
        _register_test_rule("EK698", limits=limits, reported_as=reported_as)
    assert "EK698" not in RULES


def test_rules_rfc008_cli(cli) -> None:
    rows = json.loads(cli("rules", "--rfc008", "--format", "json").stdout)
    assert [r["check_id"] for r in rows] == list(RFC008_LOCAL)
    by_id = {r["check_id"]: r for r in rows}
    assert by_id["runtime.seed_control"] == {
        "check_id": "runtime.seed_control",
        "level": "runtime",
        "envkit": ["EK413"],
        "openenv_0_10": False,
    }
    assert by_id["runtime.reward_well_formed"]["openenv_0_10"] is True
    assert "EK503" in by_id["runtime.reward_well_formed"]["envkit"]
    assert {r["check_id"] for r in rows if r["openenv_0_10"]} == RFC008_OPENENV_010
    text = cli("rules", "--rfc008")
    assert text.exit_code == 0
    line = next(ln for ln in text.stdout.splitlines() if ln.startswith("semantic.oracle_max"))
    assert "EK506" in line and line.rstrip().endswith("no")
    assert "34 local-lane checks" in text.stderr
    md = cli("rules", "--rfc008", "--format", "markdown").stdout
    assert "| `runtime.startup` | " in md and md.count("\n| `") == 34


def test_explain_and_rules_show_rfc008(cli) -> None:
    out = cli("validate", "--explain", "EK413").stdout
    assert "RFC 008 check: `runtime.seed_control`" in out
    out = cli("validate", "--explain", "EK503").stdout
    assert "`runtime.reward_well_formed` (graded by `openenv validate` 0.10)" in out
    assert "Hygiene:" in cli("validate", "--explain", "EK604").stdout
    rules = json.loads(cli("rules", "--format", "json").stdout)
    assert {r["code"]: r["rfc008"] for r in rules}["EK411"] == "runtime.episode_determinism"


def test_checks_list_reason_is_kept(in_repo: Path) -> None:
    report = validate(in_repo, static=True)
    c = next(c for c in report.checks if c.code == "EK302")
    assert isinstance(c, CheckResult) and c.status == "skipped" and c.findings == []
