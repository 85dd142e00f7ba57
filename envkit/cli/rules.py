"""``envkit rules``: list every rule of ``envkit validate``, RFC 008's local-lane checks, or
the question-blind policies EK524 plays (docs/policies.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from envkit.blind import library
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
    policies: Annotated[
        bool,
        typer.Option(
            "--policies",
            help="List the question-blind policies EK524 plays instead: name, how a payout "
            "is judged, what it sends, where the idea comes from.",
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
      envkit rules --policies --format markdown > docs/policies.md
    """
    import envkit.validation.rules  # noqa: F401 - registers every rule
    from envkit.validation.report import rfc008_table, rules_markdown, rules_table

    output = _output.Output(fmt)
    if rfc008 and policies:
        raise typer.BadParameter("--rfc008 and --policies list different things: pick one")
    if policies:
        _policies(fmt, output)
        return
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


# docs/policies.md: one section per way a payout is judged (sequences last), in declaration
# order within it.
_POLICY_SECTIONS = (
    (
        "Content-free replies (judged: floor)",
        lambda p: p.judged == "floor" and not p.sequence,
        (
            "Replies that carry no answer. One earning more than 5 % of the oracle's return on "
            "average over the seeds is a warning, more than half of it an error "
            "(`envkit.blind_floor` changes both)."
        ),
    ),
    (
        "The oracle's answer, corrupted (judged: accepted)",
        lambda p: p.judged == "accepted",
        (
            "The oracle's own answer made wrong, played only with an oracle. Closeness credit may "
            "rank them below the right answer (that is shaping); one paid the oracle's return "
            "less `floor_margin` is an error."
        ),
    ),
    (
        "Equivalent forms (judged: none)",
        lambda p: p.judged == "none",
        "Forms a grader may rightly accept: played and recorded, never a finding.",
    ),
    (
        "Sequences: tools and steps (judged: floor)",
        lambda p: p.sequence and p.judged == "floor",
        (
            "Policies that act through tool calls and the step limit rather than an answer's "
            "content, judged like the content-free replies."
        ),
    ),
)


def policies_markdown() -> str:
    """docs/policies.md: every question-blind policy of :mod:`envkit.blind.library`, grouped
    by how its payout is judged. Regenerate with
    ``envkit rules --policies --format markdown > docs/policies.md``."""
    every = list(library.POLICIES.values())
    out = [
        "# Question-blind policies",
        "",
        (
            "<!-- Generated by `envkit rules --policies --format markdown > docs/policies.md`; "
            "do not edit. -->"
        ),
        "",
        (
            f"`envkit validate` plays these {len(every)} policies on every declared seed "
            "(rule [EK524 blind-policy-paid](rules.md#ek524-blind-policy-paid)): none of them "
            "solves the task, so a grader that pays one pays for something other than the task. "
            "Each goes in the oracle's winning action with its answer slots blanked, through "
            "every action shape the environment offers (plain fields, tool calls), in a fresh "
            "episode from `reset`. `envkit rules --policies --format json` gives this table as "
            "data."
        ),
        "",
    ]
    for title, chosen, intro in _POLICY_SECTIONS:
        rows = [p for p in every if chosen(p)]
        out += [f"## {title}", "", intro, "", "| policy | sends | source |", "|---|---|---|"]
        out += [f"| `{p.name}` | {_cell(p.sends)} | {_cell(p.source)} |" for p in rows]
        out.append("")
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "&#124;").replace("\n", " ")


def _policies(fmt: Format, output: _output.Output) -> None:
    if fmt is Format.JSON:
        output.data(library.listing())
        return
    if fmt is Format.MARKDOWN:
        output.text(policies_markdown(), end="")
        return
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("policy", no_wrap=True)
    table.add_column("judged", no_wrap=True)
    table.add_column("sends", ratio=3)
    table.add_column("source", ratio=2)
    for p in library.POLICIES.values():
        judged = f"{p.judged} (sequence)" if p.sequence else p.judged
        table.add_row(p.name, judged, _output.esc(p.sends), f"[dim]{_output.esc(p.source)}[/dim]")
    output.table(table)
    counted = sum(1 for p in library.POLICIES.values() if p.judged != "none")
    _output.info(
        f"{len(library.POLICIES)} question-blind policies, {counted} of them judged "
        "(`envkit validate --explain EK524`)."
    )


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("rules")(handled(rules_cmd))
