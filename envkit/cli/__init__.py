"""The ``envkit`` command: assembles one typer app from one module per command.

A command's module is imported when the command (or its ``--help``) runs, never for
``envkit --help``, which lists every command from :data:`COMMANDS`. So a command module
imports envkit's modules at its top, except the few that reach a heavy third-party module,
imported inside the commands that use them so that every command's ``--help`` stays fast:
docker, huggingface_hub, jinja2, uvicorn and openenv, and httpx (0.1-0.2 s, with its own
command line's rich.syntax and pygments), which envkit.container, envkit.validation,
envkit.scale.pool, envkit.scale.k8s and envkit.versions import. tests/cli/test_help.py and
test_startup.py guard this.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import signal
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NoReturn, ParamSpec, TypeVar

import typer

from envkit._version import __version__
from envkit.cli import _lazy_help, _output
from envkit.cli._group import EnvkitGroup
from envkit.errors import EnvkitError, ExitCode
from envkit.resources import install_origin

if TYPE_CHECKING:
    from types import FrameType

    import click

_P = ParamSpec("_P")
_R = TypeVar("_R")

# typer renders help without importing rich.markdown/rich.traceback (see _lazy_help).
_lazy_help.install()

#: Every command: its name -> (its module under ``envkit.cli``, the one-line summary ``envkit
#: --help`` lists: the first paragraph of its help, or of a group's short help), in the order
#: of ``envkit --help``. The help lists these without importing a command module;
#: tests/cli/test_startup.py checks each summary against the command's own help.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": (
        "init",
        "Create a new OpenEnv environment that passes `envkit validate` out of the box.",
    ),
    "import": (
        "import_",
        "Bring an existing environment (reasoning-gym, verifiers, Gymnasium) into envkit.",
    ),
    "templates": (
        "templates",
        "List the templates `envkit init --template` accepts, with their options and origin.",
    ),
    "validate": (
        "validate",
        ("Check an environment: manifest, packaging, Dockerfile, secrets, live protocol, rewards."),
    ),
    "rules": (
        "rules",
        "List every rule: code, name, default severity, RFC 008 check id, summary.",
    ),
    "run": (
        "run",
        "Serve the environment until Ctrl-C: with uvicorn, or in Docker with --docker.",
    ),
    "build": ("build", "Build the environment's Docker image from its root Dockerfile."),
    "stop": (
        "stop",
        "Stop and remove containers started by `envkit run --docker`, and replica pools.",
    ),
    "capacity": ("capacity", "Size a pool of replicas for S concurrent sessions."),
    "deploy": (
        "deploy",
        "Serve a pool of environment replicas on a cluster (Kubernetes, Ray Serve).",
    ),
    "push": (
        "push",
        "Deploy the environment to a Hugging Face Docker Space, safely and verifiably.",
    ),
    "fork": (
        "fork",
        "Duplicate a Space (files, variables) into your namespace or another one.",
    ),
    "eval": (
        "eval",
        "Play episodes with a model and report rewards, success rate and pass@k.",
    ),
    "diff": (
        "diff",
        (
            "Compare two environments: schema changes, each breaking or compatible for a "
            "trained policy, then reward-range, reset-option and manifest changes, with both "
            "digests."
        ),
    ),
    "serve-oracle": (
        "serve_oracle",
        "Serve the environment's oracle as an OpenAI-compatible model named `oracle`.",
    ),
    "label": (
        "label",
        (
            "Human preference data from rollouts: compare two rollouts of the same seed in a "
            "local web page (left better / right better / tie / can't tell), then export the "
            "labels in TRL's preference format (prompt/chosen/rejected) for reward models and "
            "DPO."
        ),
    ),
    "migrate": (
        "migrate",
        "Move an environment forward to OpenEnv 0.10 and envkit's current manifest layout.",
    ),
    "skills": (
        "skills",
        (
            "Agent Skills that teach coding agents (Claude Code, Codex, Cursor, OpenCode) to "
            "build, validate and ship OpenEnv environments with envkit."
        ),
    ),
}
#: The command modules, in the order of ``envkit --help``.
COMMAND_MODULES = tuple(module for module, _ in COMMANDS.values())

#: Where a command module registers its command (``register(commands, handled)``) when the
#: root group first looks the command up (:class:`envkit.cli._group.EnvkitGroup`).
commands = typer.Typer(pretty_exceptions_show_locals=False, rich_markup_mode="rich")


def _cannot_load(name: str, exc: BaseException) -> NoReturn:
    """Stop envkit (exit 2) naming command ``name``, whose module cannot be imported:
    dropping a command silently would hide a broken install."""
    if _output.debug_enabled():
        _print_traceback()
    _output.error(
        f"Internal error: the `envkit {name}` command cannot be loaded "
        f"({type(exc).__name__}: {exc}).",
        "envkit's installation is broken: reinstall it (e.g. `uv pip install "
        "--reinstall rl-envkit`); re-run with ENVKIT_DEBUG=1 for the traceback.",
    )
    raise SystemExit(int(ExitCode.ERROR)) from None


class _Root(EnvkitGroup):
    registry = commands
    summaries: Mapping[str, str] = {name: summary for name, (_, summary) in COMMANDS.items()}

    def load(self, name: str) -> None:
        """Import command ``name``'s module and let it register on :data:`commands`."""
        try:
            module = importlib.import_module(f"envkit.cli.{COMMANDS[name][0]}")
        except Exception as exc:  # noqa: BLE001 - reported, then exit 2
            _cannot_load(name, exc)
        module.register(commands, handled)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The help lists every command from :data:`COMMANDS`; a module missing from the
        installation stops envkit here as it would when its command runs."""
        for name, (module, _) in COMMANDS.items():
            try:
                if importlib.util.find_spec(f"envkit.cli.{module}") is None:
                    raise ModuleNotFoundError(f"No module named 'envkit.cli.{module}'")
            except Exception as exc:  # noqa: BLE001 - reported, then exit 2
                _cannot_load(name, exc)
        super().format_help(ctx, formatter)


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
    """The current exception's traceback on stderr (``ENVKIT_DEBUG=1``)."""
    traceback.print_exc()


def handled(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """The one error handler: every command runs inside it.

    ``EnvkitError`` -> message, details, next step, its exit code (no traceback unless
    ``ENVKIT_DEBUG=1``). Ctrl-C -> exit 130. Anything else is a bug: a one-line report and
    exit 2 (traceback with ``ENVKIT_DEBUG=1``).
    """

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
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


def _sigterm(
    signum: int, frame: FrameType | None
) -> None:  # pragma: no cover - exercised via subprocess
    raise KeyboardInterrupt


def main() -> None:
    """Console-script entry point."""
    signal.signal(signal.SIGTERM, _sigterm)
    sys.exit(app(prog_name="envkit"))
