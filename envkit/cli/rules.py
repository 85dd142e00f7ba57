"""``envkit rules``: list every rule of ``envkit validate``, or RFC 008's local-lane checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import Format, RulesFormatOpt


def rules_cmd(
    fmt: RulesFormatOpt = Format.TEXT,
    rfc008: Annotated[
        bool,
        typer.Option(
            "--rfc008",
            help="List RFC 008's 34 local-lane check ids instead: the envkit rules "
            "implementing each and whether `openenv validate` 0.10 runs it.",
        ),
    ] = False,
) -> None:
    """List every rule: code, name, default severity, RFC 008 check id, summary.

    Codes are stable and never reused; `envkit validate --explain CODE` prints one rule's
    documentation (what it checks, why it matters, an example, the fix).

    Examples:
      envkit rules
      envkit rules --format json | jq '.[] | select(.severity == "error") | .code'
      envkit rules --format markdown > docs/rules.md
      envkit rules --rfc008
    """
    import envkit.validation.rules  # noqa: F401 - registers every rule
    from envkit.validation.report import rfc008_table, rules_markdown, rules_table

    output = _output.Output(fmt)
    if rfc008:
        _rfc008(fmt, output, rfc008_table())
        return
    if fmt is Format.JSON:
        output.data(rules_table())
        return
    if fmt is Format.MARKDOWN:
        output.text(rules_markdown(), end="")
        return
    from rich.table import Table

    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    for col in ("code", "name", "severity", "stage", "RFC 008", "summary"):
        table.add_column(col)
    for r in rules_table():
        table.add_row(
            r["code"],
            r["name"],
            r["severity"],
            r["stage"],
            r["rfc008"] or "-",
            _output.esc(r["summary"]),
        )
    output.table(table)


def _rfc008(fmt: Format, output: _output.Output, rows: list[dict]) -> None:
    if fmt is Format.JSON:
        output.data(rows)
        return
    if fmt is Format.MARKDOWN:
        lines = ["| RFC 008 check | envkit rules | openenv validate 0.10 |", "|---|---|---|"]
        lines += [
            f"| `{r['check_id']}` | {', '.join(r['envkit']) or '-'} | "
            f"{'yes' if r['openenv_0_10'] else 'no'} |"
            for r in rows
        ]
        output.text("\n".join(lines))
        return
    from rich.table import Table

    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    for col in ("RFC 008 check", "envkit rules", "openenv 0.10"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["check_id"], ", ".join(r["envkit"]) or "-", "yes" if r["openenv_0_10"] else "no"
        )
    output.table(table)
    covered = sum(1 for r in rows if r["envkit"])
    ours = sum(1 for r in rows if r["openenv_0_10"])
    _output.info(
        f"{len(rows)} local-lane checks: envkit implements {covered}, "
        f"openenv validate 0.10 runs {ours}."
    )


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("rules")(handled(rules_cmd))
