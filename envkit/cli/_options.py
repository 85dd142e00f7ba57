"""Options shared by several commands, declared once (``Annotated`` aliases)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

EnvDirArg = Annotated[
    Path,
    typer.Argument(help="Environment directory (holds openenv.yaml).", show_default=True),
]
PythonOpt = Annotated[
    Optional[str],
    typer.Option("--python", help="Interpreter that serves the environment "
                 "(default: PATH/.venv/bin/python if present, else the current one)."),
]
HostOpt = Annotated[str, typer.Option("--host", help="Bind address.")]
PortOpt = Annotated[Optional[int], typer.Option(
    "--port", "-p", min=1, max=65535,
    help="TCP port (default: the manifest's port; with --docker a free one).")]
UrlOpt = Annotated[Optional[str], typer.Option("--url", help="A running server, e.g. "
                                               "http://127.0.0.1:8000 or a Space app URL.")]
FormatOpt = Annotated[str, typer.Option("--format", "-f", help="Output format.")]
TokenOpt = Annotated[Optional[str], typer.Option(
    "--token", help="Hugging Face token (default: $HF_TOKEN, else the token saved by "
    "`hf auth login`). Never printed.", show_default=False)]
EnvVarOpt = Annotated[Optional[list[str]], typer.Option(
    "--env", "-e", help="Environment variable KEY=VALUE (repeatable).")]


def parse_key_values(items: list[str] | None, option: str) -> dict[str, str]:
    """``["A=1", "B=2"]`` -> ``{"A": "1", "B": "2"}``.

    Raises:
        typer.BadParameter: an item without ``=`` or with an empty key.
    """
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=option)
        out[key.strip()] = value
    return out
