"""The one output sink: data on stdout, progress/hints/errors on stderr (rich, markup off for
user strings, NO_COLOR honoured by rich).

Commands print their data through :class:`Output` (``data`` for JSON, ``text`` for plain
text, ``table`` for a rich table), never with ``json.dumps`` or ``print_json`` of their own,
so every command's JSON has the same shape: ``json.dumps(payload, indent=2)`` and a newline,
non-ASCII escaped.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from envkit.cli._options import Format

if TYPE_CHECKING:
    from rich.console import RenderableType

# stdout: data (JSON reports, tables a user may pipe); stderr: everything for humans.
# emoji off: `:name:` in a path, URL or template reference is text, not an emoji code.
out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def debug_enabled() -> bool:
    """``ENVKIT_DEBUG=1`` shows tracebacks."""
    return os.environ.get("ENVKIT_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


def esc(text: object) -> str:
    """Escape user-provided text for rich markup."""
    return escape(str(text))


def status(message: str) -> AbstractContextManager[object]:
    """A spinner with ``message`` (rich markup) on stderr while a block runs, on a terminal
    only: a pipe or a CI log gets nothing (rich would not animate it there), and the
    command does not pay for importing the spinner."""
    if not err.is_terminal:
        return contextlib.nullcontext()
    return err.status(message)


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


def colour(console: Console) -> bool:
    """Whether ``console`` should get colour and styles: a terminal that is not ``TERM=dumb``
    (``FORCE_COLOR`` makes any stream one), and ``NO_COLOR`` unset or empty. Rich decides the
    terminal part; ``NO_COLOR`` turns every style off here, not only colours (no-color.org:
    any non-empty value), so the output is plain text."""
    return console.color_system is not None and not console.no_color


@dataclass
class Output:
    """What a command writes, in the ``--format`` it was given: one object for all commands.

    Data goes to stdout (``data`` as JSON, ``text`` as is); everything for humans goes to
    stderr through the module's functions, whatever the format.

    Attributes:
        format: the parsed ``--format`` (``TEXT`` for a command without one).
    """

    format: Format = Format.TEXT

    @property
    def is_json(self) -> bool:
        return self.format.value == "json"

    def data(self, payload: object) -> None:
        """Print ``payload`` as indented JSON on stdout (non-JSON values via ``str``)."""
        out.print(
            json.dumps(payload, indent=2, default=str), markup=False, highlight=False, emoji=False
        )

    def text(self, text: str, *, end: str = "\n") -> None:
        """Print ``text`` on stdout as is (no markup, no highlighting, no emoji codes)."""
        out.print(text, end=end, markup=False, highlight=False, emoji=False)

    def table(self, table: RenderableType) -> None:
        """Print a rich table (any renderable) on stdout: the text format's data. Escape
        user strings in its cells with :func:`esc`."""
        out.print(table)

    info = staticmethod(info)
    success = staticmethod(success)
    warn = staticmethod(warn)
    error = staticmethod(error)
