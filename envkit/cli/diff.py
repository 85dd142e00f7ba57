"""``envkit diff OLD NEW``: what changed between two environments, and whether a policy
trained on OLD still fits NEW."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import Format, FormatOpt, PythonOpt
from envkit.errors import ExitCode


def diff_cmd(
    old: Annotated[
        str,
        typer.Argument(
            help="The environment a policy was trained on: a directory, a git revision "
            "(REV or REV:PATH) or a running server's URL.",
            show_default=False,
        ),
    ],
    new: Annotated[
        str,
        typer.Argument(help="The environment to compare it with (same forms).", show_default=False),
    ],
    fmt: FormatOpt = Format.TEXT,
    python: PythonOpt = None,
) -> None:
    """Compare two environments: schema changes, each breaking or compatible for a trained
    policy, then reward-range, reset-option and manifest changes, with both digests.

    A directory's schemas come from its own app, imported in its interpreter and asked
    GET /schema without starting a server; a URL's from GET /schema and /metadata; a git
    revision is extracted with `git archive` into a temporary directory. docs/versions.md
    lists what counts as breaking.

    Exit status: 0 nothing breaking (compatible or other changes are listed), 1 a breaking
    change, 2 usage errors or a side that cannot be read.

    Examples:
      envkit diff HEAD~1:. .
      envkit diff v0.1.0:envs/guess envs/guess --format json
      envkit diff ./guess http://127.0.0.1:8000
    """
    from envkit.versions.diff import diff, render_text
    from envkit.versions.snapshot import load

    output = _output.Output(fmt)
    _output.info(f"reading {old} and {new}…")
    # each side is one interpreter importing its app (seconds): both at once
    with ThreadPoolExecutor(max_workers=2) as pool:
        sides = [pool.submit(load, arg, python) for arg in (old, new)]
        before, after = (side.result() for side in sides)
    result = diff(before, after)
    if output.is_json:
        output.data(result.to_dict())
    else:
        output.text(render_text(result), end="")
    if result.breaking:
        raise typer.Exit(int(ExitCode.FINDINGS))


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("diff")(handled(diff_cmd))
