"""``envkit migrate``: move an environment forward to OpenEnv 0.10."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import EnvDirArg, PythonOpt
from envkit.migrate import migrate


def migrate_cmd(
    path: EnvDirArg = Path("."),
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Print the unified diff of every change on stdout; write nothing."
        ),
    ] = False,
    python: PythonOpt = None,
    probe_plan: Annotated[
        bool,
        typer.Option(
            "--probe-plan/--no-probe-plan",
            help="Make validation/runtime.json by playing the oracle when it is missing, "
            "invalid or stale (an action the environment now refuses); starts the "
            "environment's server.",
        ),
    ] = True,
) -> None:
    """Move an environment forward to OpenEnv 0.10 and envkit's current manifest layout.

    `openenv-core` becomes `openenv` 0.10 (pyproject, requirements files, Dockerfile
    installs); envkit's old keys under `validation:` move to RFC 008's fields and to the
    top-level `envkit:` section; the blocks `openenv validate` requires are added;
    `server/Dockerfile` moves to the root; `validation.execution` and its probe plan
    `validation/runtime.json` are added when an oracle is declared; a declared plan that is
    missing, invalid or stale (an action the environment now refuses) is re-recorded by
    playing the oracle again. Comments, key order and
    unknown keys survive. Running it twice changes nothing the second time. A file it cannot
    parse stops it before anything is written.

    Examples:
      envkit migrate --dry-run
      envkit migrate envs/my-env
      envkit migrate --no-probe-plan
    """
    if not dry_run:
        _output.info(f"Migrating {path} ...")
    result = migrate(path, dry_run=dry_run, python=python, probe_plan=probe_plan)
    if dry_run:
        text = result.diff()
        if text:
            _output.Output().text(text, end="")
    for change in result.changes:
        verb = ("would " if dry_run else "") + (
            "create" if change.before is None else "remove" if change.after is None else "update"
        )
        _output.info(f"{verb} {_output.esc(change.path)}")
        for line in change.summary:
            _output.info(f"  - {_output.esc(line)}")
    for note in result.notes:
        _output.warn(note)
    if not result.changed:
        _output.success("Already current: nothing to migrate.")
    elif dry_run:
        _output.info(f"{len(result.changes)} file(s) would change; run without --dry-run to apply.")
    else:
        _output.success(
            f"Migrated {len(result.changes)} file(s). Next: `envkit validate` "
            "and `openenv validate`."
        )


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("migrate")(handled(migrate_cmd))
