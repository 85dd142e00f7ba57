"""The sequence question-blind policies (every tool once, one tool over and over, invalid
arguments read back, stalling), played end to end by EK524 on a real tool-calling server:
tests/blind/fixtures/ledger, clean by default, three defects with ``LEDGER_MODE=lenient``."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from envkit.blind import library
from envkit.validation import validate
from tests.corpus.corpus import servers_without_gradio

pytestmark = pytest.mark.slow  # every test serves an environment

LEDGER = Path(__file__).parent / "fixtures" / "ledger"
SEQUENCES = {
    "every-tool-once",
    "one-tool-repeated",
    "invalid-arguments-read-back",
    "give-up",
    "repeat-last",
    "stall",
    "write-shown-paths",
    "fix-commented-out",
}
#: The sequence policies the ledger pays in lenient mode (it has no tool that writes files).
LEDGER_PAYS = SEQUENCES - {"write-shown-paths", "fix-commented-out"}
#: A workspace whose verifier reads its checks from a file the agent can write (BGW-131),
#: and its near-miss whose verifier keeps them out of reach: field cases, written blind.
WORKSPACE = Path(__file__).parents[1] / "corpus" / "field" / "bgw-131-evaluator-paths-writable"
#: A config task whose verifier greps app.conf for the settings' text (BGW-138), and its
#: near-miss that parses the settings: field cases, written blind.
CONFIG = Path(__file__).parents[1] / "corpus" / "field" / "bgw-138-proxy-state-check"


def _validate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str):
    monkeypatch.setenv("LEDGER_MODE", mode)  # the server validate starts inherits it
    env = tmp_path / "ledger"
    shutil.copytree(LEDGER, env)
    with servers_without_gradio():
        return validate(env, python=sys.executable, select=["EK524"], train_path=False)


def test_every_sequence_policy_is_reported_where_it_pays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every `lookup` call pays 0.25, a badly typed `lookup` quotes the balance and a blank
    answer pays 0.3 without ending the episode: stalling on the tool earns more than the
    oracle, the quoted balance sent back earns all of it, and every sequence policy pays."""
    report = _validate(tmp_path, monkeypatch, "lenient")
    found = [f for f in report.findings if f.code == "EK524"]
    assert len(found) == 1, [(f.code, f.message) for f in report.findings]
    (finding,) = found
    assert finding.severity.value == "error"
    by_name = {p["policy"]: p for p in finding.data["policies"]}
    assert set(by_name) >= LEDGER_PAYS, sorted(by_name)
    assert {name for name, p in library.POLICIES.items() if p.sequence} == SEQUENCES
    stall = by_name["stall"]
    assert stall["share"] > 1.0  # 8 calls at 0.25 against the oracle's 1.25
    assert all(a["tool_name"] == "lookup" for a in stall["actions"])
    read_back = by_name["invalid-arguments-read-back"]
    assert read_back["share"] >= 0.99
    assert read_back["slot"] == "arguments.answer"
    last = read_back["actions"][-1]
    assert last["tool_name"] == "submit_answer" and last["arguments"]["answer"].isdigit()
    # the value sent back is the balance the error quoted, not one the observation showed
    assert read_back["value"] == last["arguments"]["answer"]
    assert "envkit eval" in finding.data["replay"]
    assert by_name["repeat-last"]["share"] > 1.0  # 8 blank answers at 0.3
    assert len(by_name["give-up"]["actions"]) == 1
    # only content-free and sequence policies here: no corrupted answer is paid as right
    assert all(p["judged"] == "floor" for p in finding.data["policies"])


def test_a_correct_tool_environment_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same server with an exact grader, no per-call pay and errors that quote nothing:
    EK524 is evaluated (not skipped) and finds nothing."""
    report = _validate(tmp_path, monkeypatch, "")
    assert [f.code for f in report.findings] == [], [(f.code, f.message) for f in report.findings]
    (check,) = [c for c in report.checks if c.code == "EK524"]
    assert check.status == "passed", check


@pytest.mark.parametrize(
    ("case", "paid"), [("defect_workspace_tests", True), ("nearmiss_workspace_tests", False)]
)
def test_a_checks_file_the_task_names_is_overwritten(tmp_path: Path, case: str, paid: bool) -> None:
    """write-shown-paths writes `[]` to `tests/cases.json`, which the prompt names, then
    submits: a verifier reading its checks from the agent's workspace pays 1.0."""
    env = tmp_path / case
    shutil.copytree(WORKSPACE / case, env)
    with servers_without_gradio():
        report = validate(env, python=sys.executable, select=["EK524"], train_path=False)
    found = [f for f in report.findings if f.code == "EK524"]
    assert bool(found) is paid, [(f.code, f.message) for f in report.findings]
    if paid:
        by_name = {p["policy"]: p for p in found[0].data["policies"]}
        write = by_name["write-shown-paths"]
        assert write["share"] >= 0.99
        first = write["actions"][0]
        assert first["tool_name"] == "write_file"
        assert first["arguments"] == {"path": "tests/cases.json", "content": "[]"}


@pytest.mark.parametrize(
    ("case", "paid"), [("defect_conf_keywords", True), ("nearmiss_conf_keywords", False)]
)
def test_a_fix_commented_out_is_paid_only_by_a_text_check(
    tmp_path: Path, case: str, paid: bool
) -> None:
    """fix-commented-out replays the oracle's episode with the file it writes commented out
    line by line: a verifier that greps the text pays it as the fix, one that reads the
    settings does not."""
    env = tmp_path / case
    shutil.copytree(CONFIG / case, env)
    with servers_without_gradio():
        report = validate(env, python=sys.executable, select=["EK524"], train_path=False)
    found = [f for f in report.findings if f.code == "EK524"]
    assert bool(found) is paid, [(f.code, f.message) for f in report.findings]
    if paid:
        by_name = {p["policy"]: p for p in found[0].data["policies"]}
        fix = by_name["fix-commented-out"]
        assert fix["judged"] == "accepted" and fix["share"] >= 0.99
        (write,) = [a for a in fix["actions"] if a["tool_name"] == "write_file"]
        lines = write["arguments"]["content"].splitlines()
        assert lines and all(line.startswith("# ") for line in lines if line.strip())
        assert "# tls = on" in lines
