"""CLI polish: shell completion, `envkit rules` at 80 columns, `run --timeout`'s own help."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ENVKIT = str(Path(sys.executable).parent / "envkit")


def test_run_timeout_has_its_own_help(cli):
    run_help = " ".join(cli("run", "--help").output.split())
    eval_help = " ".join(cli("eval", "--help").output.split())
    assert "Serve for at most SECONDS" in run_help
    assert "Not with --docker" in run_help
    assert "Budget of the whole run" not in run_help
    assert "Budget of the whole run" in eval_help  # the shared text stays for the others


def test_root_help_offers_completion(cli):
    out = cli("--help").output
    assert "--install-completion" in out and "--show-completion" in out


def test_show_completion_prints_a_bash_script(cli, monkeypatch):
    # Typer's switch for naming the shell instead of detecting it from the parent process;
    # read when the command is built, so it is set before the runner builds it.
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    result = cli("--show-completion", "bash")
    assert result.exit_code == 0, result.output
    assert "complete -o default -F _envkit_completion envkit" in result.output
    assert "_ENVKIT_COMPLETE=complete_bash" in result.output


def test_completion_completes_command_names():
    env = {**os.environ, "_ENVKIT_COMPLETE": "complete_bash", "COMP_WORDS": "envkit ru"}
    env["COMP_CWORD"] = "1"
    proc = subprocess.run([ENVKIT], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["rules", "run"]


def _rule_names() -> list[str]:
    proc = subprocess.run(
        [ENVKIT, "rules", "--format", "json"], capture_output=True, text=True, timeout=60
    )
    return [r["name"] for r in json.loads(proc.stdout)]


@pytest.mark.parametrize("columns", ["80", None], ids=["COLUMNS=80", "piped"])
def test_rules_never_cut_names(columns):
    """Piped (rich then assumes 80 columns) or at 80 columns, every name is whole."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns:
        env["COLUMNS"] = columns
    proc = subprocess.run([ENVKIT, "rules"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    names = _rule_names()
    assert len(names) > 50
    missing = [
        n for n in names if not re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", proc.stdout)
    ]
    assert not missing, missing
    assert "…" not in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) <= 80


def test_rules_at_80_columns_in_process(cli, monkeypatch):
    from envkit.cli import _output

    monkeypatch.setattr(_output.out, "_width", 80)
    out = cli("rules").output
    assert all(name in out for name in _rule_names())
    assert "…" not in out


def test_rules_wide_terminal_is_one_row_per_rule():
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.run([ENVKIT, "rules"], capture_output=True, text=True, env=env, timeout=60)
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["code", "name", "severity"]
    assert re.match(r"EK101\s+manifest-missing\s+error\s+static\s+static\.manifest\s+\S", lines[1])
