"""``envkit stop``: stop containers that ``envkit run --docker`` started."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import parse_key_values


def stop_cmd(
    names: Annotated[
        list[str] | None,
        typer.Argument(
            help="Container names or ids (default: every container envkit started).",
            show_default=False,
        ),
    ] = None,
    label: Annotated[
        list[str] | None,
        typer.Option(
            "--label",
            help="Without NAMES: only envkit containers that also carry label "
            "KEY=VALUE (repeatable).",
            show_default=False,
        ),
    ] = None,
    grace: Annotated[
        float,
        typer.Option(
            "--grace", min=0.0, metavar="SECONDS", help="Seconds between SIGTERM and SIGKILL."
        ),
    ] = 3.0,
    old_timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.0,
            hidden=True,
            help="Deprecated name of --grace (--timeout is a whole-run budget elsewhere).",
        ),
    ] = None,
) -> None:
    """Stop and remove containers started by `envkit run --docker`.

    Only containers carrying envkit's label (envkit.managed=true) are ever stopped; naming
    any other container is an error and stops nothing. Prints the stopped names on stdout.

    Examples:
      envkit stop envkit-my-env-3f2a1c
      envkit stop --label team=ci
      envkit stop
    """
    from envkit.container import stop_containers
    from envkit.errors import UsageError

    if old_timeout is not None:
        _output.warn(
            "--timeout is deprecated for `envkit stop`; use --grace (in every other "
            "command --timeout is the whole run's budget)."
        )
        grace = old_timeout
    labels = parse_key_values(label, "--label")
    if names and labels:
        raise UsageError(
            "--label selects containers when no NAMES are given.",
            hint="Pass either names or --label.",
        )
    stopped = stop_containers(names or None, timeout_s=grace, labels=labels)
    if not stopped:
        _output.info("No envkit containers to stop.")
        return
    output = _output.Output()
    for c in stopped:
        output.text(c.name)
    _output.success(f"Stopped and removed {len(stopped)} container(s).")


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("stop")(handled(stop_cmd))
