"""``envkit rules``: list every rule of ``envkit validate``."""

from __future__ import annotations

import json
from collections.abc import Callable

import typer

from envkit.cli import _output
from envkit.cli._options import Format, RulesFormatOpt


def rules_cmd(
    fmt: RulesFormatOpt = Format.TEXT,
) -> None:
    """List every rule: code, name, default severity, summary.

    Codes are stable and never reused; `envkit validate --explain CODE` prints one rule's
    documentation (what it checks, why it matters, an example, the fix).

    Examples:
      envkit rules
      envkit rules --format json | jq '.[] | select(.severity == "error") | .code'
      envkit rules --format markdown > docs/rules.md
    """
    import envkit.validation.rules  # noqa: F401 - registers every rule
    from envkit.validation.report import rules_markdown, rules_table

    output = _output.Output(fmt)
    if fmt is Format.JSON:
        _output.out.print_json(json.dumps(rules_table()))
        return
    if fmt is Format.MARKDOWN:
        output.text(rules_markdown(), end="")
        return
    from rich.table import Table

    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    for col in ("code", "name", "severity", "stage", "summary"):
        table.add_column(col)
    for r in rules_table():
        table.add_row(r["code"], r["name"], r["severity"], r["stage"], _output.esc(r["summary"]))
    _output.out.print(table)


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("rules")(handled(rules_cmd))
