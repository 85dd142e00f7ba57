"""``envkit templates``: list the bundled templates and their options."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import Format


def templates_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the templates `envkit init --template` accepts, with their options.

    Examples:
      envkit templates
      envkit init my-game --template guess
    """
    from envkit.scaffold import list_templates

    templates = list_templates()
    output = _output.Output(Format.JSON if as_json else Format.TEXT)
    if output.is_json:
        output.data(
            [
                {
                    "name": t.name,
                    "description": t.description,
                    "options": {
                        k: {"default": o.default, "help": o.help, "choices": list(o.choices)}
                        for k, o in t.options.items()
                    },
                }
                for t in templates
            ]
        )
        return
    from rich.table import Table

    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("template")
    table.add_column("description")
    table.add_column("options")
    for t in templates:
        opts = "\n".join(
            f"--set {k}=… (default {o.default!r}) {o.help}".strip() for k, o in t.options.items()
        )
        name = f"{t.name} (default)" if t is templates[0] else t.name
        table.add_row(_output.esc(name), _output.esc(t.description), _output.esc(opts or "-"))
    output.table(table)


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("templates")(handled(templates_cmd))
