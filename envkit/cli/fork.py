"""``envkit fork``: duplicate a Hugging Face Space."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import Format, FormatOpt, TokenOpt
from envkit.cli.push import quiet_hub_client
from envkit.hub import fork


def fork_cmd(
    source: Annotated[str, typer.Argument(help="Space to copy, NS/NAME.")],
    destination: Annotated[
        str | None,
        typer.Argument(help="New Space, NS/NAME or NAME \\[default: <you>/<source name>]."),
    ] = None,
    private: Annotated[
        bool | None,
        typer.Option(
            "--private/--public",
            help="Visibility of the copy \\[default: the Hub's].",
            show_default=False,
        ),
    ] = None,
    hardware: Annotated[
        str | None,
        typer.Option("--hardware", help="Hardware flavour of the copy (cpu-basic, t4-small, ...)."),
    ] = None,
    token: TokenOpt = None,
    fmt: FormatOpt = Format.TEXT,
) -> None:
    """Duplicate a Space (files, variables) into your namespace or another one.

    Secrets are not copied by the Hub: set them again with `envkit push --secret KEY`.

    Examples:
      envkit fork openenv/echo-env
      envkit fork openenv/echo-env my-echo --private
      envkit fork openenv/echo-env my-org/echo-env --hardware t4-small
    """
    quiet_hub_client()
    with _output.status(f"Duplicating {_output.esc(source)}…"):
        result = fork(source, destination, private=private, hardware=hardware, token=token)
    if fmt is Format.JSON:
        _output.Output(fmt).data(result.to_dict())
        return
    _output.success(
        f"Duplicated {_output.esc(result.source)} to {_output.esc(result.repo_id)}"
        + (" (the Hub is still copying files)" if result.files_copy_pending else "")
        + "."
    )
    _output.out.print(f"Space: {_output.esc(result.space_url)}")
    _output.out.print(f"App:   {_output.esc(result.app_url)}")


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("fork")(handled(fork_cmd))
