"""The text report says how many checks were skipped and how to see why; --show-all lists
each with its reason (before, skipped checks appeared only in JSON)."""

from __future__ import annotations

from pathlib import Path


def test_the_text_report_counts_skipped_checks_and_lists_them_on_request(
    cli, echo_env: Path
) -> None:
    short = cli("validate", str(echo_env), "--static", "--exit-zero")
    assert "checks skipped, each for a reason (`--show-all` lists them" in short.output
    assert "EK401 server-start-failed: --static was given" not in short.output
    full = cli("validate", str(echo_env), "--static", "--exit-zero", "--show-all")
    assert "Skipped (" in full.output
    assert "  EK401 server-start-failed: --static was given" in full.output
    # deselected rules are the user's choice, not listed as skipped
    chosen = cli("validate", str(echo_env), "--static", "--select", "EK1", "--show-all")
    assert "deselected" not in chosen.output
