"""validate's oracle: importing its module is start-up (``--startup-timeout``), each action
one answer (``--reply-timeout``), so a slow import no longer reads as a slow oracle."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from envkit.validation import validate

SLOW_ORACLE = Path(__file__).parent / "envs" / "slow_oracle" / "slow_oracle.py"


@pytest.fixture
def slow_oracle_env(echo_env: Path, copy_env) -> Path:
    """A copy of the echo environment whose `envkit.oracle` is `slow_oracle:policy`."""
    root = copy_env(echo_env)
    shutil.copy(SLOW_ORACLE, root / "slow_oracle.py")
    manifest = root / "openenv.yaml"
    text = manifest.read_text()
    assert "oracle: server.oracle:policy" in text
    manifest.write_text(text.replace("oracle: server.oracle:policy", "oracle: slow_oracle:policy"))
    return root


def _oracle_findings(root: Path, url: str, **timeouts: float) -> list:
    report = validate(
        root,
        url=url,
        oracle_with_url=True,
        python=sys.executable,
        episodes=1,
        select=["EK506"],
        **timeouts,
    )
    assert "EK506" in {c.code for c in report.checks if c.status != "skipped"}
    return [f for f in report.findings if f.code == "EK506"]


def test_an_import_longer_than_a_reply_is_fine_under_the_startup_timeout(
    slow_oracle_env: Path, echo_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 11 s: past the 10 s validate used to allow for loading and each answer together,
    # well inside a 60 s start-up timeout, while one answer may take only 2 s.
    monkeypatch.setenv("SLOW_ORACLE_IMPORT_S", "11")
    findings = _oracle_findings(
        slow_oracle_env, echo_server.url, startup_timeout_s=60, reply_timeout_s=2
    )
    assert findings == []


def test_an_import_past_the_startup_timeout_names_the_load(
    slow_oracle_env: Path, echo_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLOW_ORACLE_IMPORT_S", "4")
    (finding,) = _oracle_findings(
        slow_oracle_env, echo_server.url, startup_timeout_s=1, reply_timeout_s=30
    )
    assert "did not load within 1 s (the start-up timeout)" in finding.message
    assert "importing `slow_oracle` took longer" in finding.message
    assert "`slow_oracle.py` free of heavy imports" in finding.message
    assert "--startup-timeout" in finding.message
