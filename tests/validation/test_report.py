"""What users read: text/json/github snapshots, the JSON contract against its schema, JUnit
XML, and the rule documentation (every rule documented, docs/rules.md up to date).

Snapshots live in tests/validation/snapshots/; regenerate with ENVKIT_UPDATE_SNAPSHOTS=1.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from envkit.findings import RULES, Stage, codes_of
from envkit.validation import validate
from envkit.validation.report import SCHEMA_PATH, render, rules_markdown

SNAPSHOTS = Path(__file__).with_name("snapshots")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def broken_report(clean_env: Path, monkeypatch: pytest.MonkeyPatch):
    """A report with an error, a warning and an info, in several files, with stable timings."""
    text = (clean_env / "openenv.yaml").read_text().replace("port: 8000", "port: 80000")
    (clean_env / "openenv.yaml").write_text(text)
    (clean_env / "inference.py").unlink()
    df = (clean_env / "Dockerfile").read_text()
    (clean_env / "Dockerfile").write_text(
        df.replace("COPY pyproject.toml uv.lock* ./", "COPY . ./")
    )
    monkeypatch.chdir(clean_env)
    report = validate(".", static=True)
    report.target = "echo-env"
    report.timings = {"static": 0.012, "total": 0.015}
    # the real digest follows the template's files and the lock PyPI resolved: pin it
    assert report.digests is not None and report.digests.env is not None
    report.digests = replace(report.digests, env="sha256:" + "e" * 64)
    return report


def _snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("ENVKIT_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.is_file(), f"missing snapshot {path}; run with ENVKIT_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text()


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_output_snapshot(fmt: str, broken_report) -> None:
    text = render(broken_report, fmt).replace(
        f'"envkit_version": "{broken_report.to_dict()["envkit_version"]}"', '"envkit_version": "X"'
    )
    _snapshot(f"broken.{'txt' if fmt == 'text' else fmt}", text)


def test_text_show_all_snapshot(broken_report) -> None:
    """`--show-all` lists the hygiene findings the default text folds (issue #13 item 4)."""
    _snapshot("broken-all.txt", render(broken_report, "text", show_all=True))


def test_json_matches_schema_and_contract(broken_report) -> None:
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    data = json.loads(render(broken_report, "json"))
    jsonschema.validate(data, schema)
    assert data["passed"] is False
    assert data["summary"] == {
        "errors": 1,
        "warnings": 1,
        "infos": 1,
        "checks_run": data["summary"]["checks_run"],
    }
    # sorted: severity first
    assert [f["severity"] for f in data["findings"]] == ["error", "warning", "info"]
    # every rule, with its status and why it was skipped (issue #13 item 4)
    checks = {c["code"]: c for c in data["checks"]}
    assert len(checks) == len(broken_report.checks)
    assert sum(c["status"] != "skipped" for c in checks.values()) == data["summary"]["checks_run"]
    assert all(c["reason"] for c in checks.values() if c["status"] == "skipped")
    assert sum(c["findings"] for c in checks.values()) == len(data["findings"])
    # a schema that accepted anything would not catch a broken report
    data["findings"][0]["severity"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


def test_junit_has_one_case_per_check(broken_report) -> None:
    root = ET.fromstring(render(broken_report, "junit"))
    cases = root.findall(".//testcase")
    assert len(cases) == len(broken_report.checks)
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert failed == ["EK107 manifest-bad-port"]
    skipped = [c.get("name") for c in cases if c.find("skipped") is not None]
    live = set(codes_of(Stage.RUNTIME)) | set(codes_of(Stage.TRAINING))
    assert all(n.split()[0] in live for n in skipped)  # only runtime/training skipped: --static


def test_github_escapes_newlines_and_commas(broken_report) -> None:
    f = broken_report.findings[0]
    f.message = "line one\nline, two: 100%"
    out = render(broken_report, "github").splitlines()[0]
    assert out.startswith("::error file=openenv.yaml,line=7,col=1,title=EK107 manifest-bad-port::")
    assert "line one%0Aline, two: 100%25" in out


def test_every_rule_is_documented() -> None:
    import envkit.validation.rules  # noqa: F401

    assert RULES, "no rules registered"
    for rule in RULES.values():
        for part in (rule.summary, rule.what, rule.why, rule.example, rule.fix):
            assert part and part.strip(), f"{rule.code} lacks documentation"
        assert rule.url.endswith(f"#{rule.code.lower()}-{rule.name}")


def test_docs_rules_md_is_up_to_date() -> None:
    import envkit.validation.rules  # noqa: F401

    doc = (REPO / "docs" / "rules.md").read_text()
    assert doc == rules_markdown(), (
        "docs/rules.md is stale: run `envkit rules --format markdown > docs/rules.md`"
    )
    for rule in RULES.values():  # the anchor of Rule.url exists as a heading
        assert f"\n## {rule.code} {rule.name}\n" in doc


def test_the_way_the_server_started_is_said_once(broken_report) -> None:
    """The launch line and the note that also lists the ways that exited said the same thing
    twice (issue #13, in-repo environments): the note alone is shown."""
    launch = "package form from the parent folder: uvicorn x_env.server.app:app in /e"
    broken_report.runtime.launch = launch
    broken_report.runtime.notes = [
        (
            f"started with the {launch} (after 1 way(s) that exited: "
            "uvicorn server.app:app -> ImportError: boom)"
        )
    ]
    text = render(broken_report, "text")
    assert text.count("uvicorn x_env.server.app:app") == 1
    assert "ImportError: boom" in text
    broken_report.runtime.notes = []
    assert f"Server started with the {launch}." in render(broken_report, "text")


@pytest.mark.slow
def test_envkit_own_interpreter_is_a_note_of_the_report(tmp_path: Path) -> None:
    """No --python and no `.venv`: the environment ran in envkit's interpreter, which a
    trainer started elsewhere does not share; said once, as a note. An explicit --python,
    even envkit's own, is a choice: no note."""
    import shutil
    import sys

    env = tmp_path / "knobs"
    shutil.copytree(Path(__file__).parent / "envs" / "knobs", env)
    report = validate(env, select=["EK402"], train_path=False)
    text = render(report, "text")
    assert text.count(f"Note: interpreter: envkit's own interpreter ({sys.executable})") == 1
    assert "A trainer started from another interpreter will not have openenv" in text
    assert any(
        n.startswith("interpreter:") for n in json.loads(render(report, "json"))["runtime"]["notes"]
    )
    explicit = validate(env, python=sys.executable, select=["EK402"], train_path=False)
    assert "interpreter:" not in render(explicit, "text")
