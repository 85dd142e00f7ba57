"""The one output sink: data on stdout, progress/hints/errors on stderr (rich, markup off for
user strings, NO_COLOR honoured by rich)."""

from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.markup import escape

# stdout: data (JSON reports, tables a user may pipe); stderr: everything for humans.
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def debug_enabled() -> bool:
    """``ENVKIT_DEBUG=1`` shows tracebacks."""
    return os.environ.get("ENVKIT_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


def esc(text: object) -> str:
    """Escape user-provided text for rich markup."""
    return escape(str(text))


def info(message: str) -> None:
    err.print(message)


def success(message: str) -> None:
    err.print(f"[green]✓[/green] {message}")


def warn(message: str, hint: str | None = None) -> None:
    err.print(f"[yellow]warning:[/yellow] {esc(message)}")
    if hint:
        err.print(f"  {esc(hint)}")


def error(message: str, hint: str | None = None, details: str | None = None) -> None:
    err.print(f"[bold red]error:[/bold red] {esc(message)}")
    if details:
        for line in details.rstrip().splitlines():
            err.print(f"  [dim]│[/dim] {esc(line)}")
    if hint:
        err.print(f"  {esc(hint)}")


def is_tty() -> bool:
    return sys.stderr.isatty()
