"""The ``envkit`` command: assembles one typer app from one module per command.

Command modules import only typer/rich at module level; docker, huggingface_hub, jinja2,
uvicorn and openenv are imported inside the commands that need them, so ``envkit --help``
stays fast (tests/cli/test_help.py guards this).
"""

from __future__ import annotations

import functools
import importlib
import signal
import sys
from collections.abc import Callable
from typing import Any

import typer

from envkit._version import __version__
from envkit.cli import _lazy_help, _output
from envkit.cli._group import EnvkitGroup
from envkit.errors import EnvkitError, ExitCode

# typer renders help without importing rich.markdown/rich.traceback (see _lazy_help).
_lazy_help.install()

# Order is the order of `envkit --help`.
COMMAND_MODULES = (
    "init",
    "import_",
    "templates",
    "validate",
    "rules",
    "run",
    "build",
    "stop",
    "capacity",
    "deploy",
    "push",
    "fork",
    "eval",
    "diff",
    "serve_oracle",
    "label",
    "migrate",
    "skills",
)

#: Where every command module registers its commands; the root group builds one from it
#: when it is looked up (:class:`envkit.cli._group.EnvkitGroup`).
commands = typer.Typer(pretty_exceptions_show_locals=False, rich_markup_mode="rich")


class _Root(EnvkitGroup):
    registry = commands
    order: tuple[str, ...] = ()  # filled by _register_all


app = typer.Typer(
    name="envkit",
    cls=_Root,
    help="Build reinforcement-learning environments for LLM agents that speak the OpenEnv "
    "contract: scaffold, validate, build, serve, deploy to Hugging Face Spaces, evaluate.",
    epilog="Quickstart: envkit init my-env && cd my-env && envkit validate && envkit run",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_traceback() -> None:
    """The current exception's traceback on stderr (``ENVKIT_DEBUG=1``); ``traceback`` is
    imported here because every start of the CLI pays for a module-level import."""
    import traceback

    traceback.print_exc()


def handled(func: Callable[..., Any]) -> Callable[..., Any]:
    """The one error handler: every command runs inside it.

    ``EnvkitError`` -> message, details, next step, its exit code (no traceback unless
    ``ENVKIT_DEBUG=1``). Ctrl-C -> exit 130. Anything else is a bug: a one-line report and
    exit 2 (traceback with ``ENVKIT_DEBUG=1``).
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.BadParameter):
            raise
        except EnvkitError as exc:
            if _output.debug_enabled():
                _print_traceback()
            _output.error(exc.message, exc.hint, exc.details)
            raise typer.Exit(int(exc.exit_code)) from None
        except KeyboardInterrupt:
            _output.err.print("Interrupted.")
            raise typer.Exit(130) from None
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            if _output.debug_enabled():
                _print_traceback()
            _output.error(
                f"Internal error: {type(exc).__name__}: {exc}",
                "This is a bug in envkit. Re-run with ENVKIT_DEBUG=1 for the "
                "traceback and report it.",
            )
            raise typer.Exit(int(ExitCode.ERROR)) from None

    return wrapper


def _version_callback(value: bool) -> None:
    if value:
        from envkit.resources import install_origin

        _output.Output().text(f"envkit {__version__} ({install_origin()})")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        callback=_version_callback,
        is_eager=True,
        help="Show the version and exit.",
    ),
) -> None:
    """envkit: the toolkit for OpenEnv reinforcement-learning environments."""


def _registered_name(info: Any) -> str:
    """The name a command (``CommandInfo``) or a group (``TyperInfo``) was registered under."""
    name = getattr(info, "name", None)
    if isinstance(name, str):
        return name
    if getattr(info, "typer_instance", None) is not None:
        return str(info.typer_instance.info.name)
    return typer.main.get_command_name(info.callback.__name__)


def _register_all() -> None:
    """Import every command module. One that cannot be imported stops envkit (exit 2) with
    its name: dropping a command silently would hide a broken install."""
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"envkit.cli.{name}")
        except Exception as exc:  # noqa: BLE001 - reported, then exit 2
            if _output.debug_enabled():
                _print_traceback()
            _output.error(
                f"Internal error: the `envkit {name}` command cannot be loaded "
                f"({type(exc).__name__}: {exc}).",
                "envkit's installation is broken: reinstall it (e.g. `uv pip install "
                "--reinstall rl-envkit`); re-run with ENVKIT_DEBUG=1 for the traceback.",
            )
            raise SystemExit(int(ExitCode.ERROR)) from None
        before = {id(i) for i in commands.registered_commands + commands.registered_groups}
        module.register(commands, handled)
        for info in commands.registered_commands + commands.registered_groups:
            if id(info) not in before:
                _Root.order += (_registered_name(info),)


_register_all()


def _sigterm(signum: int, frame: Any) -> None:  # pragma: no cover - exercised via subprocess
    raise KeyboardInterrupt


def main() -> None:
    """Console-script entry point."""
    signal.signal(signal.SIGTERM, _sigterm)
    sys.exit(app(prog_name="envkit"))
