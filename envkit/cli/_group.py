"""The root command group: help shows value names, not typer's type labels, and prose that
rich wraps to the terminal (:func:`unwrap`).

Typer's help puts a type label after every parameter: ``<bool>`` after a flag, ``<str>``,
``<path>``, ``<list[str]>``, ``<int range>``. A flag takes no value, and the others say the
Python type rather than what to type. :class:`EnvkitGroup` (the root's ``cls``) gives every
parameter of the whole tree, when typer builds it, a display that shows:

- a flag: nothing;
- an option with ``metavar=``: that metavar (``SECONDS``, ``KEY=VALUE``, ``[text|json]``);
- another option: its long name in capitals (``--python PYTHON``, ``--seed SEED``), the
  convention of click and argparse;
- an argument: nothing after its name (``path``), which the usage line already shows.

It does so by moving each typer parameter to a subclass overriding only
``display_type_rich``, typer's own hook for this column, as the group hands a command out
(typer has no setting for it; ``metavar=`` cannot do it for flags or arguments, whose
metavar is also their name; and typer's command classes are compiled, so a command class
cannot be swapped the same way). Ranges
(``[1<=x<=65535]``) and defaults stay as typer renders them.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from typer.core import TyperArgument, TyperGroup, TyperOption


class _Option(TyperOption):
    def display_type_rich(self, ctx: Any) -> str | None:
        if self.metavar is not None:
            return self.metavar
        if self.is_flag or self.count:
            return None
        longest = max(self.opts, key=len).lstrip("-/")
        name = longest.replace("-", "_").upper()
        return name + ("..." if self.nargs != 1 else "")


class _Argument(TyperArgument):
    def display_type_rich(self, ctx: Any) -> str | None:
        return None


def _quiet(param: Any) -> None:
    if type(param) is TyperOption:
        param.__class__ = _Option
    elif type(param) is TyperArgument:
        param.__class__ = _Argument


_LIST_ITEM = re.compile(r"^(?:[-*•]|\d+[.)])\s")


def _structured(line: str) -> bool:
    """An indented line or a list item: its line break is meant."""
    return line[:1].isspace() or bool(_LIST_ITEM.match(line))


def unwrap(help_text: str) -> str:
    """``help_text`` with each prose paragraph on one line, so rich wraps it to the terminal.

    Typer's rich help keeps the line breaks of a docstring's paragraphs after the first,
    so a docstring wrapped at 100 columns in the source showed ragged at 80. A paragraph
    is prose when none of its lines is indented or a list item (``-``, ``*``, ``1.``); one
    with such lines (``Examples:`` and its commands, a list) or starting with ``\\b`` is kept
    as written.

    Args:
        help_text: a command's help (its docstring, dedented or not).

    Returns:
        The same paragraphs, separated by one blank line.
    """
    paragraphs = inspect.cleandoc(help_text).split("\n\n")
    out = []
    for para in paragraphs:
        lines = para.split("\n")
        prose = not para.startswith("\b") and not any(_structured(ln) for ln in lines)
        out.append(" ".join(ln.strip() for ln in lines) if prose else para)
    return "\n\n".join(out)


def value_names(command: Any, ctx: Any) -> None:
    """Give ``command``'s parameters, its ``--help`` option and those of every command
    below it the display described in the module docstring. Idempotent.

    Click makes a command's ``--help`` option on first use and keeps it
    (``Command.get_help_option`` caches it), so it is made here, with ``ctx``'s help option
    names, which its own context inherits."""
    if command.help:
        command.help = unwrap(command.help)
    for param in getattr(command, "params", ()):
        _quiet(param)
    help_option = command.get_help_option(ctx)
    if help_option is not None:
        _quiet(help_option)
    for sub in getattr(command, "commands", {}).values():
        value_names(sub, ctx)


class EnvkitGroup(TyperGroup):
    """The ``envkit`` group: typer's group whose commands, as it hands them out, get
    :func:`value_names`."""

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)  # its own, --help and the completion options
        for param in params:
            _quiet(param)
        return params

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            value_names(command, ctx)
        return command
