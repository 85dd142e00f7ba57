"""``envkit deploy ray``: serve an environment from N replicas on a running Ray cluster.

Registered into the ``deploy`` group by :func:`register_ray`. Imports only typer here; the
deploy itself (:mod:`envkit.scale.ray_deploy`) runs ray in a separate interpreter, so envkit
never imports ray.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import EnvVarOpt, FormatOpt, parse_key_values
from envkit.scale import ray_deploy


def ray_cmd(
    path: Annotated[
        Path, typer.Argument(help="Environment directory (holds openenv.yaml).")
    ] = Path("."),
    replicas: Annotated[
        int | None,
        typer.Option("--replicas", "-n", min=1, help="Fixed number of replicas \\[default: 1]."),
    ] = None,
    autoscale: Annotated[
        str | None,
        typer.Option(
            "--autoscale",
            metavar="MIN:MAX",
            help="Scale between MIN and MAX replicas on open sessions (Serve's "
            "target_ongoing_requests = 0.75 x MAX_CONCURRENT_ENVS).",
        ),
    ] = None,
    address: Annotated[
        str,
        typer.Option(
            "--address", help="The Ray cluster: auto, HOST:PORT of the head node, or ray://..."
        ),
    ] = "auto",
    name: Annotated[
        str | None,
        typer.Option("--name", help="Serve application name \\[default: the manifest's name]."),
    ] = None,
    port: Annotated[
        int,
        typer.Option("--port", "-p", min=1, max=65535, help="Port of Serve's HTTP proxy."),
    ] = 8000,
    python: Annotated[
        str | None,
        typer.Option(
            "--python",
            help="Interpreter with ray\\[serve] and the environment's dependencies "
            "\\[default: PATH/.venv/bin/python if present, else the current one].",
        ),
    ] = None,
    env: EnvVarOpt = None,
    delete: Annotated[
        str | None,
        typer.Option(
            "--delete",
            metavar="APP",
            help="Delete Serve application APP instead (Ray keeps running).",
        ),
    ] = None,
    fmt: FormatOpt = "text",  # type: ignore[assignment]
) -> None:
    """Serve the environment from replicas on a running Ray cluster (Ray Serve).

    The unchanged OpenEnv app runs in every replica (the environment directory is the
    Ray job's working_dir); each replica accepts MAX_CONCURRENT_ENVS sessions, and Serve's
    proxy keeps every WebSocket session on one replica. The app stays up after the command
    exits; `--delete APP` removes it. Ray itself is never stopped.

    Ray binds all interfaces and has no authentication by default: run the cluster on a
    trusted network.

    Examples:
      envkit deploy ray --replicas 2 --address 127.0.0.1:26379 -e MAX_CONCURRENT_ENVS=4
      envkit deploy ray envs/my-env --autoscale 1:4 --python envs/my-env/.venv/bin/python
      envkit deploy ray --delete my_env --address 127.0.0.1:26379
    """
    output = _output.Output(format=fmt)
    if delete is not None:
        left = ray_deploy.delete_ray(delete, address=address, python=python)
        if output.is_json:
            output.data({"deleted": delete, "applications": left})
            return
        _output.success(f"Deleted Serve application {delete!r}; Ray keeps running.")
        return
    scale = ray_deploy.parse_autoscale(autoscale) if autoscale else None
    env_vars = parse_key_values(env, "--env")
    _output.warn(ray_deploy.SECURITY_NOTE)
    _output.info(f"Deploying to Ray at {address} (connect, upload, start replicas)...")
    result = ray_deploy.deploy_ray(
        path,
        replicas=replicas,
        autoscale=scale,
        address=address,
        name=name,
        port=port,
        python=python,
        env_vars=env_vars,
    )
    if output.is_json:
        output.data(
            {
                "name": result.name,
                "url": result.url,
                "autoscale": list(result.autoscale) if result.autoscale else None,
                "capacity": result.plan.as_dict(),
                "seconds": result.seconds,
            }
        )
        return
    if result.port_note:
        _output.warn(result.port_note)
    sizing = result.plan.summary()
    if result.autoscale:
        low, high = result.autoscale
        sizing = f"autoscaling {low}..{high} replicas; at most {sizing}"
    _output.info(sizing)
    output.text(result.url)
    _output.success(
        f"Serve application {result.name!r} is up at {result.url} (ENV_URL for a trainer). "
        f"Remove it with: envkit deploy ray --delete {result.name} --address {address}"
    )


def register_ray(deploy_app: typer.Typer, handled: Callable) -> None:
    """Add ``ray`` to the ``deploy`` group."""
    deploy_app.command("ray")(handled(ray_cmd))
