"""``envkit stop``: stop containers (and replica pools) that ``envkit run --docker`` started."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import parse_key_values
from envkit.errors import UsageError


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
    """Stop and remove containers started by `envkit run --docker`, and replica pools.

    Only containers carrying envkit's label (envkit.managed=true) are ever stopped; naming
    any other container is an error and stops nothing. A pool's name (`envkit run --docker
    --replicas N --name NAME`) removes its replicas, balancer and network. Prints the
    removed names on stdout.

    Examples:
      envkit stop envkit-my-env-3f2a1c
      envkit stop my-pool
      envkit stop --label team=ci
      envkit stop
    """
    from envkit.container import stop_containers
    from envkit.scale.pool import remove_orphan_networks, stop_pool

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
    pools = _pool_names(names or [])
    rest = [n for n in names or [] if n not in pools]
    removed: list[str] = []
    if rest or not names:
        # First: it checks every name before stopping any, so a wrong name stops nothing.
        removed += [c.name for c in stop_containers(rest or None, timeout_s=grace, labels=labels)]
    if pools:
        for pool in pools:
            removed += stop_pool(pool, timeout_s=grace)
    if not names:
        removed += remove_orphan_networks()
    if not removed:
        _output.info("No envkit containers to stop.")
        return
    output = _output.Output()
    for name in removed:
        output.text(name)
    what = f" (pool{'s' if len(pools) > 1 else ''} {', '.join(pools)})" if pools else ""
    _output.success(f"Stopped and removed {len(removed)} container(s) and network(s){what}.")


def _pool_names(names: list[str]) -> list[str]:
    """The names among ``names`` that name a replica pool (``envkit.pool`` labels)."""
    if not names:
        return []
    from envkit.container import docker_client
    from envkit.scale.pool import pool_exists

    client = docker_client()
    try:
        return [n for n in names if pool_exists(n, client)]
    finally:
        client.close()


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("stop")(handled(stop_cmd))
