"""``envkit import``: bring an existing environment (reasoning-gym, verifiers, Gymnasium) into
envkit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import parse_key_values
from envkit.cli.init import _print_result
from envkit.errors import UsageError
from envkit.importers import import_environment, list_targets


def import_cmd(
    source: Annotated[
        str,
        typer.Argument(
            help="reasoning-gym:TASK, verifiers:MODULE, a path to a .py file with "
            "load_environment, or gymnasium:ID."
        ),
    ],
    name: Annotated[
        str | None, typer.Argument(help="Environment name, e.g. my-env or my_env.")
    ] = None,
    output_dir: Annotated[
        Path, typer.Option("--output-dir", "-o", help="Parent directory of the new environment.")
    ] = Path("."),
    no_lock: Annotated[
        bool, typer.Option("--no-lock", help="Skip `uv lock` (needs PyPI).")
    ] = False,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="KEY=VALUE passed to a verifiers module's load_environment (repeatable).",
        ),
    ] = None,
    no_skills: Annotated[
        bool,
        typer.Option("--no-skills", help="Do not install envkit's Agent Skills."),
    ] = False,
    list_: Annotated[
        bool,
        typer.Option(
            "--list",
            help="List what SOURCE offers (reasoning-gym's tasks, one per line with its "
            "description) instead of importing.",
        ),
    ] = False,
) -> None:
    """Bring an existing environment (reasoning-gym, verifiers, Gymnasium) into envkit.

    The result has the files `envkit init` writes (tests, oracle, Dockerfile, trl_env.py,
    inference.py, README card, openenv.yaml, uv.lock) and passes `envkit validate`; the
    source's packages are pinned exactly (==).

    Sources: a reasoning-gym task (seeded items; reward = the task's score_answer; its
    difficulty settings are reset options), a Prime verifiers environment (its dataset rows
    and rubric; the module is copied into the environment), or a Gymnasium id (the gymnasium
    template). Reading a reasoning-gym or verifiers source installs its packages into a
    throwaway uv environment. Nothing is written on error.

    Examples:
      envkit import reasoning-gym:leg_counting legs
      envkit import ./my_vf_env.py my-env --set num_examples=50
      envkit import verifiers:vf_gsm8k gsm8k
      envkit import gymnasium:Acrobot-v1 acrobot
      envkit import --list reasoning-gym
    """
    if list_:
        with _output.status(f"Reading the tasks of {_output.esc(source)}…"):
            targets = list_targets(source)
        for target, about in targets.items():
            typer.echo(f"{target}\t{about}" if about else target)  # tab-separated: no rich
        _output.err.print(f"{len(targets)} tasks: `envkit import {source.rstrip(':')}:TASK NAME`.")
        return
    if name is None:
        raise UsageError(
            "Missing argument NAME: the new environment's name.",
            hint=f"e.g. `envkit import {source} my-env`.",
        )
    options = parse_key_values(set_, "--set")
    with _output.status(f"Importing {_output.esc(source)} as {_output.esc(name)}…"):
        result = import_environment(
            source,
            name,
            output_dir=output_dir,
            lock=not no_lock,
            skills=not no_skills,
            options=options,
        )
    _print_result(result)


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("import")(handled(import_cmd))
