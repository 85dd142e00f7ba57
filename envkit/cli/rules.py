"""``envkit rules``: list every rule of ``envkit validate``, or RFC 008's local-lane checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from envkit.cli import _output
from envkit.cli._options import Format, RulesFormatOpt

if TYPE_CHECKING:
    from rich.console import RenderableType


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
        _rfc008(fmt, output, rfc008_table(), rules_table())
        return
    if fmt is Format.JSON:
        output.data(rules_table())
        return
    if fmt is Format.MARKDOWN:
        output.text(rules_markdown(), end="")
        return
    output.table(_rules_table(rules_table(), _output.out.width))


# Below this width (columns) the one-row-per-rule table would squeeze the summaries into
# a strip of a few characters: each rule then takes two rows, facts above, summary below.
_WIDE = 120


def _rules_table(rows: list[dict], width: int) -> RenderableType:
    """The text format of `envkit rules` for a terminal ``width`` columns wide.

    Codes and names are what a user copies (`--explain`, `ignore:`), so they are never cut or
    split, even at 80 columns or when piped (rich then assumes 80); summaries wrap.
    """
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    if width < _WIDE:
        table.add_column("code", no_wrap=True)
        table.add_column("name  severity  stage  RFC 008 / summary", ratio=1)
        for r in rows:
            facts = f"{r['name']}  {r['severity']}  {r['stage']}  {r['rfc008'] or '-'}"
            table.add_row(r["code"], _output.esc(facts))
            table.add_row("", f"[dim]{_output.esc(r['summary'])}[/dim]", end_section=True)
        return table
    name_width = max((len(r["name"]) for r in rows), default=4)
    table.add_column("code", no_wrap=True)
    table.add_column("name", no_wrap=True, min_width=name_width)
    table.add_column("severity", no_wrap=True)
    table.add_column("stage", no_wrap=True)
    table.add_column("RFC 008", no_wrap=True)
    table.add_column("summary", ratio=1)
    for r in rows:
        table.add_row(
            r["code"],
            r["name"],
            r["severity"],
            r["stage"],
            r["rfc008"] or "-",
            _output.esc(r["summary"]),
        )
    return table


def _rfc008(fmt: Format, output: _output.Output, rows: list[dict], rules: list[dict]) -> None:
    """The local-lane table; in text, a last line names the hub-lane ids (``statistical.*``)
    some envkit rules approximate locally, which the table of local ids cannot show."""
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
    local = {r["check_id"] for r in rows}
    hub: dict[str, list[str]] = {}
    for rule in rules:
        if rule["rfc008"] and rule["rfc008"] not in local:
            hub.setdefault(rule["rfc008"], []).append(rule["code"])
    if hub:
        _output.info(
            "Hub-lane checks envkit approximates locally: "
            + "; ".join(f"{cid} ({', '.join(codes)})" for cid, codes in sorted(hub.items()))
            + "."
        )


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("rules")(handled(rules_cmd))
