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
from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING, Any, TypeVar

from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption
from typer.main import get_command_from_info, get_command_name, get_group_from_info
from typer.models import CommandInfo, DefaultPlaceholder, TyperInfo

if TYPE_CHECKING:
    import click
    import typer
    from typer.core import MarkupMode

_T = TypeVar("_T")


class _Option(TyperOption):
    def display_type_rich(self, ctx: click.Context) -> str | None:
        if self.metavar is not None:
            return self.metavar
        if self.is_flag or self.count:
            return None
        longest = max(self.opts, key=len).lstrip("-/")
        name = longest.replace("-", "_").upper()
        return name + ("..." if self.nargs != 1 else "")


class _Argument(TyperArgument):
    def display_type_rich(self, ctx: click.Context) -> str | None:
        return None


def _quiet(param: click.Parameter) -> None:
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


def value_names(command: click.Command, ctx: click.Context) -> None:
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


class _Commands(MutableMapping):
    """A group's commands by name, each built from its typer registration on first access.

    Typer builds every command of a tree when it builds the root group, reading each
    callback's signature and annotations (``typer.utils.get_params_from_function``, about
    a sixth of ``envkit --help``'s run time), though one run uses one command. Here the
    names are known at once and a command is built when it is looked up.
    """

    def __init__(
        self, registry: typer.Typer, settings: dict[str, Any], order: tuple[str, ...]
    ) -> None:
        infos: dict[str, CommandInfo | TyperInfo] = {}
        for info in registry.registered_commands:
            infos[info.name or get_command_name(info.callback.__name__)] = info
        for info in registry.registered_groups:
            infos[_group_name(info)] = info
        # typer keeps commands and groups apart; the help lists them in ``order``
        rank = {name: i for i, name in enumerate(order)}
        self._infos = dict(sorted(infos.items(), key=lambda kv: rank.get(kv[0], len(rank))))
        self._built: dict[str, click.Command] = {}
        self._settings = settings

    def built(self, name: str) -> click.Command | None:
        """The command if it has been built, else ``None``."""
        return self._built.get(name)

    def info(self, name: str) -> CommandInfo | TyperInfo | None:
        """Typer's registration of ``name`` (``CommandInfo`` or ``TyperInfo``)."""
        return self._infos.get(name)

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._built:
            info = self._infos[name]
            if isinstance(info, CommandInfo):
                self._built[name] = get_command_from_info(
                    info,
                    pretty_exceptions_short=self._settings["pretty_exceptions_short"],
                    rich_markup_mode=self._settings["rich_markup_mode"],
                )
            else:
                self._built[name] = get_group_from_info(info, **self._settings)
        return self._built[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._infos.setdefault(name, None)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._infos[name]
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._infos)

    def __len__(self) -> int:
        return len(self._infos)


def _group_name(info: TyperInfo) -> str:
    """The name a sub-typer is added under (``add_typer(name=...)`` or its own ``name``)."""
    for name in (info.name, info.typer_instance.info.name):
        if isinstance(name, str):
            return name
    raise TypeError("every envkit sub-command group is added with a name")


def _first_set(*values: _T | DefaultPlaceholder | None) -> _T | None:
    return next(
        (v for v in values if v is not None and not isinstance(v, DefaultPlaceholder)), None
    )


def _summary(name: str, info: CommandInfo | TyperInfo, markup: MarkupMode) -> TyperCommand:
    """A parameterless stand-in carrying what a group's help lists of ``name``: its help,
    short help, panel and flags (``typer.rich_utils``'s commands panel reads only these)."""
    if isinstance(info, CommandInfo):
        help_text = info.help if info.help is not None else inspect.getdoc(info.callback)
        extra = {"short_help": info.short_help, "hidden": info.hidden}
        extra.update(deprecated=info.deprecated, rich_help_panel=info.rich_help_panel)
    else:
        own = info.typer_instance.info
        callback = _first_set(info.callback, own.callback)
        help_text = _first_set(info.help, own.help) or (
            inspect.getdoc(callback) if callback else None
        )
        extra = {"short_help": _first_set(info.short_help, own.short_help)}
        extra["hidden"] = bool(_first_set(info.hidden, own.hidden))
        extra["deprecated"] = bool(_first_set(info.deprecated, own.deprecated))
        extra["rich_help_panel"] = _first_set(info.rich_help_panel, own.rich_help_panel)
    help_text = unwrap(help_text) if help_text else help_text
    return TyperCommand(name=name, help=help_text, rich_markup_mode=markup, **extra)


class EnvkitGroup(TyperGroup):
    """The ``envkit`` group: typer's group whose commands are built when looked up (from
    :attr:`registry`, see :class:`_Commands`) and, as it hands them out, get
    :func:`value_names`. Its own help lists stand-ins (:func:`_summary`), so ``envkit
    --help`` builds no command.

    Attributes:
        registry: the ``typer.Typer`` every command module registers its commands on; set by
            a subclass (``envkit.cli``). ``None``: typer's eager behaviour.
        order: the commands' names in the order the help lists them (others after).
    """

    registry: typer.Typer | None = None
    order: tuple[str, ...] = ()

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._listing = False
        if self.registry is not None:
            settings = {
                "pretty_exceptions_short": self.registry.pretty_exceptions_short,
                "rich_markup_mode": self.rich_markup_mode,
                "suggest_commands": self.registry.suggest_commands,
            }
            lazy = _Commands(self.registry, settings, self.order)
            for name, command in self.commands.items():
                lazy[name] = command
            self.commands = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)  # its own, --help and the completion options
        for param in params:
            _quiet(param)
        return params

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        commands = self.commands
        if self._listing and isinstance(commands, _Commands) and commands.built(cmd_name) is None:
            info = commands.info(cmd_name)
            if info is not None:
                return _summary(cmd_name, info, self.rich_markup_mode)
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            value_names(command, ctx)
        return command
