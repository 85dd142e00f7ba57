"""``envkit rules``: list every rule of ``envkit validate``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.errors import UsageError


def rules_cmd(
    fmt: Annotated[str, typer.Option("--format", "-f", help="text (a table), json, or "
                                     "markdown (docs/rules.md).")] = "text",
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

    if fmt == "json":
        _output.out.print_json(json.dumps(rules_table()))
        return
    if fmt == "markdown":
        _output.out.print(rules_markdown(), end="", markup=False, emoji=False)
        return
    if fmt != "text":
        raise UsageError(f"--format {fmt!r} is not one of text, json, markdown.",
                         hint="Pass --format text, json or markdown.")
    from rich.table import Table

    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    for col in ("code", "name", "severity", "stage", "summary"):
        table.add_column(col)
    for r in rules_table():
        table.add_row(r["code"], r["name"], r["severity"], r["stage"], _output.esc(r["summary"]))
    _output.out.print(table)


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("rules")(handled(rules_cmd))
