"""``envkit templates``: list the built-in templates and their options, and where an
environment's template came from (``--env DIR``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from envkit.catalog import list_templates
from envkit.cli import _output
from envkit.cli._options import Format
from envkit.cookie import BUILTIN_ORIGIN
from envkit.envdir.toml import read_pyproject
from envkit.errors import UsageError


def templates_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    env: Annotated[
        Path | None,
        typer.Option(
            "--env",
            help="Show where the template of the environment in DIR came from (recorded by "
            "`envkit init` in its pyproject.toml, [tool.envkit.template]).",
            metavar="DIR",
        ),
    ] = None,
) -> None:
    """List the templates `envkit init --template` accepts, with their options and origin.

    The built-in templates ship with envkit (origin `built-in`). `envkit init --template`
    also takes an external cookiecutter template (a directory, .zip, git URL or
    gh:owner/repo); there is no list of those: `--env DIR` shows the one an environment was
    made from (its source and, for git, the commit).

    Examples:
      envkit templates
      envkit templates --env envs/my-env
      envkit init my-game --template guess
      envkit init my-env --template gh:owner/repo
    """
    output = _output.Output(Format.JSON if as_json else Format.TEXT)
    if env is not None:
        _show_environment_template(env, output)
        return

    templates = list_templates()
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

    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("template")
    table.add_column("origin")
    table.add_column("description")
    table.add_column("options")
    for t in templates:
        opts = "\n".join(
            f"--set {k}=… (default {o.default!r}) {o.help}".strip() for k, o in t.options.items()
        )
        name = f"{t.name} (default)" if t is templates[0] else t.name
        table.add_row(
            _output.esc(name),
            BUILTIN_ORIGIN,
            _output.esc(t.description),
            _output.esc(opts or "-"),
        )
    output.table(table)


def _show_environment_template(env: Path, output: _output.Output) -> None:
    """Print ``[tool.envkit.template]`` of ``env``'s pyproject.toml.

    Raises:
        UsageError: ``env`` is not a directory or has no record (made before envkit recorded
            templates, or by hand).
    """
    if not env.is_dir():
        raise UsageError(f"{env} is not a directory.", hint="Pass an environment's directory.")
    data, _error = read_pyproject(env)
    tool = (data or {}).get("tool")
    table = tool.get("envkit", {}).get("template") if isinstance(tool, dict) else None
    if not isinstance(table, dict) or not table.get("name"):
        raise UsageError(
            f"{env} records no template: its pyproject.toml has no [tool.envkit.template] "
            "(`envkit init` writes it).",
            hint="Environments made by hand or by an older envkit do not say where their "
            "template came from.",
        )
    record = {k: str(v) for k, v in table.items()}
    if output.is_json:
        output.data({"path": str(env), **record})
        return
    lines = [f"{env}: made from the {record['name']} template"]
    lines += [f"  {k}: {v}" for k, v in record.items() if k != "name"]
    output.text("\n".join(lines))


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("templates")(handled(templates_cmd))
