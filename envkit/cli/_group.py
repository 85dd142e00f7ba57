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
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption
from typer.main import get_command_from_info, get_command_name, get_group_from_info
from typer.models import CommandInfo, TyperInfo

if TYPE_CHECKING:
    import click
    import typer


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
    """A group's commands by name, each built on first access from the typer registration
    its command module makes when it is imported.

    Typer builds every command of a tree when it builds the root group, reading each
    callback's signature and annotations (``typer.utils.get_params_from_function``, about
    a sixth of ``envkit --help``'s run time), and envkit would import every command module
    to register them, though one run uses one command. Here the names are known at once
    (:attr:`EnvkitGroup.summaries`); a command's module is imported and the command built
    when it is looked up.
    """

    def __init__(
        self,
        registry: typer.Typer,
        settings: dict[str, Any],
        names: Iterable[str],
        load: Callable[[str], None],
    ) -> None:
        self._registry = registry
        self._names = dict.fromkeys(names)  # ordered; the help lists them in this order
        self._built: dict[str, click.Command] = {}
        self._settings = settings
        self._load = load

    def built(self, name: str) -> click.Command | None:
        """The command if it has been built, else ``None``."""
        return self._built.get(name)

    def info(self, name: str) -> CommandInfo | TyperInfo:
        """Typer's registration of ``name`` (``CommandInfo`` or ``TyperInfo``), importing its
        command module first if need be.

        Raises:
            LookupError: the module registered no command of that name.
        """
        info = _registered(self._registry, name)
        if info is None:
            self._load(name)
            info = _registered(self._registry, name)
        if info is None:
            raise LookupError(f"no command {name!r} was registered by its module")
        return info

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._built:
            if name not in self._names:
                raise KeyError(name)
            info = self.info(name)
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
        self._names.setdefault(name)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._names[name]
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _registered(registry: typer.Typer, name: str) -> CommandInfo | TyperInfo | None:
    """The registration of ``name`` on ``registry``, a command or a sub-typer."""
    for info in registry.registered_commands:
        if (info.name or get_command_name(info.callback.__name__)) == name:
            return info
    for group in registry.registered_groups:
        if _group_name(group) == name:
            return group
    return None


def _group_name(info: TyperInfo) -> str:
    """The name a sub-typer is added under (``add_typer(name=...)`` or its own ``name``)."""
    for name in (info.name, info.typer_instance.info.name):
        if isinstance(name, str):
            return name
    raise TypeError("every envkit sub-command group is added with a name")


def listed_summary(command: click.Command) -> str:
    """What a group's help lists for ``command``: the first paragraph of its short help, or
    else of its help (``typer.rich_utils``'s commands panel, rich markup mode)."""
    text = command.short_help or command.help or ""
    return inspect.cleandoc(text).split("\n\n")[0].strip()


class EnvkitGroup(TyperGroup):
    """The ``envkit`` group: typer's group whose commands are imported and built when looked
    up (see :class:`_Commands`) and, as it hands them out, get :func:`value_names`. Its own
    help lists parameterless stand-ins carrying each command's summary, so ``envkit --help``
    imports and builds no command.

    Attributes:
        registry: the ``typer.Typer`` every command module registers its commands on; set by
            a subclass (``envkit.cli``). ``None``: typer's eager behaviour.
        summaries: every command's name -> the one-line summary the help lists
            (:func:`listed_summary` of the command), in the order the help lists them.
    """

    registry: typer.Typer | None = None
    summaries: Mapping[str, str] = {}

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._listing = False
        if self.registry is not None:
            settings = {
                "pretty_exceptions_short": self.registry.pretty_exceptions_short,
                "rich_markup_mode": self.rich_markup_mode,
                "suggest_commands": self.registry.suggest_commands,
            }
            lazy = _Commands(self.registry, settings, self.summaries, self.load)
            for name, command in self.commands.items():
                lazy[name] = command
            self.commands = lazy

    def load(self, name: str) -> None:
        """Import the module that registers command ``name`` on :attr:`registry`; a subclass
        with a :attr:`registry` says how."""
        raise NotImplementedError

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
            summary = self.summaries.get(cmd_name)
            if summary is not None:
                return TyperCommand(
                    name=cmd_name, help=summary, rich_markup_mode=self.rich_markup_mode
                )
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            value_names(command, ctx)
        return command
