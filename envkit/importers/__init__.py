"""``envkit import SOURCE NAME``: bring an existing environment into envkit.

A source is ``KIND:TARGET``:

- ``reasoning-gym:TASK``: a reasoning-gym procedural task (:mod:`envkit.importers.reasoning_gym`);
- ``verifiers:MODULE`` or a path to a ``.py`` file with ``load_environment``: a Prime
  verifiers environment (:mod:`envkit.importers.verifiers`); ``verifiers:DIR``, a package
  name or a Hub id: a ``verifiers.v1`` taskset (:mod:`envkit.importers.verifiers_v1`);
- ``gymnasium:ID``: the built-in ``gymnasium`` template with ``gym_id=ID``.

The result is an ordinary envkit environment, rendered through the same renderer as
``envkit init`` (the hidden templates under ``templates/_import/`` plus ``_common`` and
``_partials``), with the same post-steps (skills, atomic write, ``uv lock``, ``envkit validate
--static``). The source's own packages are pinned exactly (``==``) in the generated
pyproject.toml.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path

from envkit.errors import DestinationError, UsageError
from envkit.importers import reasoning_gym, verifiers, verifiers_v1
from envkit.names import normalise_name
from envkit.scaffold import InitResult, init_project, write_project

KINDS = ("reasoning-gym", "verifiers", "gymnasium")
"""The source kinds ``envkit import`` knows (``KIND:TARGET``)."""


def parse_source(source: str) -> tuple[str, str]:
    """Split ``SOURCE`` into ``(kind, target)``.

    A path to an existing ``.py`` file (or one ending in ``.py``) is a verifiers module.

    Raises:
        UsageError: no known kind, or an empty target.
    """
    text = source.strip()
    kind, sep, target = text.partition(":")
    kind = kind.strip().lower().replace("_", "-")
    if sep and kind in KINDS:
        pass
    elif text.endswith(".py"):
        return "verifiers", text
    else:
        close = difflib.get_close_matches(kind, KINDS, n=1) if sep else []
        maybe = f" Did you mean `{close[0]}:`?" if close else ""
        raise UsageError(
            f"Unknown import source `{source}`: expected one of "
            + ", ".join(f"{k}:..." for k in KINDS)
            + f" or a path to a .py file.{maybe}",
            hint="e.g. `envkit import reasoning-gym:leg_counting legs`.",
        )
    if not target.strip():
        raise UsageError(
            f"`{source}` names no {kind} target.",
            hint=f"e.g. `envkit import {kind}:{_EXAMPLES[kind]} NAME`.",
        )
    return kind, target.strip()


_EXAMPLES = {"reasoning-gym": "leg_counting", "verifiers": "my_env", "gymnasium": "Acrobot-v1"}


def list_targets(source: str) -> dict[str, str]:
    """What ``envkit import KIND:TARGET`` accepts as TARGET for ``source`` (a kind, with or
    without the colon): target -> one line about it. Only reasoning-gym registers its tasks
    where envkit can read them (installed into a throwaway uv environment: needs PyPI).

    Raises:
        UsageError: another kind (verifiers modules and Gymnasium ids are not listed), or
            reasoning-gym cannot be installed.
    """
    kind = source.strip().rstrip(":").lower().replace("_", "-")
    if kind == "reasoning-gym":
        return reasoning_gym.list_tasks()
    known = ", ".join(KINDS)
    raise UsageError(
        f"`--list` lists reasoning-gym's tasks; `{source}` is not reasoning-gym"
        + (
            " (verifiers modules and Gymnasium ids are named by their packages)."
            if kind in KINDS
            else f" (sources: {known})."
        ),
        hint="`envkit import --list reasoning-gym`.",
    )


def import_environment(
    source: str,
    name: str,
    *,
    output_dir: str | os.PathLike[str] = ".",
    lock: bool = True,
    skills: bool = True,
    options: Mapping[str, str] | None = None,
) -> InitResult:
    """Create environment ``NAME`` from ``source``.

    Args:
        source: ``reasoning-gym:TASK``, ``verifiers:MODULE``, a ``.py`` path or
            ``gymnasium:ID``.
        name: the new environment's name (``my-env``); its directory is ``output_dir/name``.
        output_dir: parent directory; created when missing.
        lock: run ``uv lock`` afterwards (needs PyPI; a failure is reported, not raised).
        skills: install envkit's Agent Skills into the environment.
        options: extra settings for the source (``load_environment`` keyword arguments for
            verifiers; reasoning-gym and gymnasium take none).

    Returns:
        :class:`envkit.scaffold.InitResult`.

    Raises:
        UsageError: unknown source kind, unknown task or module, a module without
            ``load_environment``, a source that cannot be read.
        DestinationError: the destination exists or cannot be written. Nothing is written
            on any error.
    """
    kind, target = parse_source(source)
    names = normalise_name(name)
    dest = (Path(output_dir).expanduser() / names.raw).absolute()
    if dest.exists():
        raise DestinationError(
            f"{dest} already exists.", hint="Choose another name or --output-dir."
        )
    if options and kind != "verifiers":
        raise UsageError(
            f"--set applies to verifiers modules; a {kind} source takes none.",
            hint="reasoning-gym difficulty settings are reset options: "
            "`reset(seed=0, max_animals=5)`.",
        )
    if kind == "gymnasium":
        return init_project(
            name,
            template="gymnasium",
            output_dir=output_dir,
            lock=lock,
            options={"gym_id": target},
            skills=skills,
        )
    if kind == "reasoning-gym":
        rendered, src = reasoning_gym.render(target, names)
    else:
        v1 = verifiers_v1.is_taskset_source(target)
        render = verifiers_v1.render if v1 else verifiers.render
        rendered, src = render(target, names, dict(options or {}))
    return write_project(
        names, rendered, output_dir=output_dir, source=src, lock=lock, skills=skills
    )
