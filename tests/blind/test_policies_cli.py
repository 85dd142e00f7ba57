"""``envkit rules --policies``: the question-blind policies in text, JSON and markdown, and
docs/policies.md kept generated from the library."""

from __future__ import annotations

import json
from pathlib import Path

from envkit.blind import library
from envkit.cli.rules import policies_markdown

REPO = Path(__file__).resolve().parents[2]


def test_json_is_the_library_listing(cli) -> None:
    result = cli("rules", "--policies", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows == library.listing()
    assert len(rows) == len(library.POLICIES) >= 30
    assert all(r["sends"] and r["source"] and r["judged"] for r in rows)


def test_text_lists_every_policy(cli) -> None:
    result = cli("rules", "--policies", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for name in library.POLICIES:
        assert name in result.stdout, name
    assert "stall" in result.stdout and "floor (sequence)" in result.stdout
    assert "EK101" not in result.stdout  # the policies, not the rules
    assert f"{len(library.POLICIES)} question-blind policies" in result.stderr


def test_policies_and_rfc008_together_are_refused(cli) -> None:
    result = cli("rules", "--policies", "--rfc008")
    assert result.exit_code == 2
    assert "pick one" in result.output


def test_docs_policies_md_is_up_to_date(cli) -> None:
    doc = (REPO / "docs" / "policies.md").read_text()
    assert doc == policies_markdown(), (
        "docs/policies.md is stale: run "
        "`envkit rules --policies --format markdown > docs/policies.md`"
    )
    assert cli("rules", "--policies", "--format", "markdown").stdout == doc
    for p in library.POLICIES.values():  # each policy once, in its section's table
        assert doc.count(f"\n| `{p.name}` |") == 1, p.name
    rules = (REPO / "docs" / "rules.md").read_text()
    assert "\n## EK524 blind-policy-paid\n" in rules  # the link from policies.md resolves
