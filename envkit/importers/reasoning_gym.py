"""``envkit import reasoning-gym:TASK``: a reasoning-gym procedural task as an environment.

Facts read from the reasoning-gym 0.1.25 wheel: ``reasoning_gym.create_dataset(name,
seed=..., size=..., **config)`` builds the task's config dataclass (``factory.DATASETS[name]
= (dataset_cls, config_cls)``), item ``i`` of a dataset is drawn from ``Random(seed + i)``,
an item is ``{"question", "answer", "metadata"}`` and ``dataset.score_answer(answer, entry)``
is the task's reward in [0, 1].
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from envkit.catalog import load_template
from envkit.cookie import TemplateSource
from envkit.envdir.constants import PROBE_PLAN_PATH
from envkit.errors import UsageError
from envkit.importers._inspect import run_inspector
from envkit.names import EnvNames
from envkit.probe_plan import dumps, plan_document
from envkit.resources import templates_dir
from envkit.scaffold import render_context, render_template

VERSION = "0.1.25"
"""The reasoning-gym release generated environments pin (``reasoning-gym==VERSION``)."""
DISTRIBUTION = "reasoning-gym"
IMPORT_ORIGIN = "import"
"""``[tool.envkit.template] origin`` of an imported environment."""


def list_tasks() -> dict[str, str]:
    """Every task reasoning-gym registers, with the first line of its dataset's docstring
    (``""`` when it has none), read with reasoning-gym itself (:data:`VERSION`).

    Raises:
        UsageError: reasoning-gym cannot be installed (no PyPI) or its listing failed.
    """
    doc = run_inspector(
        "reasoning_gym_task.py",
        ["--list"],
        [f"{DISTRIBUTION}=={VERSION}"],
        what=f"reasoning-gym {VERSION}",
    )
    about = doc.get("about") or {}
    return {str(t): str(about.get(t, "")) for t in doc.get("tasks", [])}


def inspect_task(task: str) -> dict[str, Any]:
    """The task's options and its item at seed 0, read with reasoning-gym itself.

    Raises:
        UsageError: ``task`` is not a reasoning-gym task (the message names close matches),
            or reasoning-gym cannot be installed.
    """
    doc = run_inspector(
        "reasoning_gym_task.py",
        [task],
        [f"{DISTRIBUTION}=={VERSION}"],
        what=f"reasoning-gym {VERSION}",
    )
    if "tasks" in doc:
        tasks = [str(t) for t in doc["tasks"]]
        close = difflib.get_close_matches(task, tasks, n=5, cutoff=0.5)
        near = f"close matches: {', '.join(close)}" if close else f"{len(tasks)} tasks exist"
        raise UsageError(
            f"reasoning-gym {VERSION} has no task `{task}` ({near}).",
            hint="List them: `envkit import --list reasoning-gym`.",
        )
    if doc.get("score") != 1.0:
        raise UsageError(
            f"reasoning-gym's `{task}` scores its own answer {doc.get('score')} (not 1.0): "
            "an oracle could not reach the maximum reward.",
            hint="Pick another task.",
        )
    return doc


def render(task: str, names: EnvNames) -> tuple[dict[Path, bytes], TemplateSource]:
    """The files of the new environment and where they came from.

    Raises:
        UsageError: see :func:`inspect_task`.
    """
    doc = inspect_task(task)
    tpl = load_template(templates_dir() / "_import" / "reasoning_gym")
    options = [
        {"name": o["name"], "default": o["default"], "example": o["default"]}
        for o in doc["options"]
    ]
    context = render_context(names, tpl, {})
    context["dependencies"] = [f"{DISTRIBUTION}=={VERSION}"]
    context["vars"] = {
        **tpl.vars,
        "task": task,
        "source_version": VERSION,
        "options": options,
        "option_names": [o["name"] for o in options],
    }
    context["validation"] = {**tpl.validation, "tags": ["reasoning-gym", "rlvr"]}
    rendered = render_template(tpl, context)
    plan = plan_document([{"answer": doc["answer"]}])
    rendered[Path(PROBE_PLAN_PATH)] = dumps(plan).encode("utf-8")
    source = TemplateSource(name=f"reasoning-gym:{task}", origin=IMPORT_ORIGIN)
    return rendered, source
