"""``envkit deploy``: serve an environment somewhere that outlives the command.

Minimal group for the ``ray`` subcommand (:mod:`envkit.cli.deploy_ray`); the full group,
with ``k8s``, replaces this module at merge.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from envkit.cli.deploy_ray import register_ray

deploy_app = typer.Typer(
    name="deploy",
    help="Serve an environment from several replicas behind one URL (Ray Serve).",
    no_args_is_help=True,
)


def register(app: typer.Typer, handled: Callable) -> None:
    register_ray(deploy_app, handled)
    app.add_typer(deploy_app, name="deploy")
