"""``envkit import verifiers:MODULE`` / ``envkit import path/to/module.py``: a Prime verifiers
environment (a module with ``load_environment``) as an OpenEnv environment.

The module is copied into the new environment (``server/source_env.py``) and driven by
``server/verifiers_bridge.py`` (templates/_import/verifiers), which speaks verifiers' classic
environment API (``SingleTurnEnv``/``MultiTurnEnv``/``ToolEnv`` with a ``Rubric``: dataset
rows, ``env_response``/``is_completed``, weighted reward functions that may be coroutines).
verifiers 0.4.0 replaced that API by ``verifiers.v1`` (tasksets and harnesses, no
``load_environment`` contract); modules written for it are not supported.

The module's third-party imports are pinned to the versions installed in this Python
(``importlib.metadata``), so the environment runs what the author ran.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from envkit.catalog import load_template
from envkit.cookie import TemplateSource
from envkit.envdir.constants import PROBE_PLAN_PATH
from envkit.envdir.pysource import parse_python
from envkit.errors import UsageError
from envkit.importers._inspect import run_inspector
from envkit.importers.reasoning_gym import IMPORT_ORIGIN
from envkit.names import EnvNames
from envkit.probe_plan import dumps, plan_document
from envkit.resources import templates_dir
from envkit.scaffold import render_context, render_template

ENTRY = "load_environment"


def locate(target: str) -> tuple[Path, str]:
    """The module file of ``target`` (a ``.py`` path or an importable module name) and a
    label for it.

    Raises:
        UsageError: no such file or module, or a package instead of one module file.
    """
    if target.endswith(".py") or "/" in target or "\\" in target:
        path = Path(target).expanduser()
        if not path.is_file():
            raise UsageError(
                f"No module file {path}.", hint="Pass the path of a .py file with load_environment."
            )
        return path.resolve(), path.name
    try:
        spec = importlib.util.find_spec(target)
    except (ImportError, ValueError) as exc:
        spec, cause = None, f" ({exc})"
    else:
        cause = ""
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise UsageError(
            f"No module `{target}` is importable here{cause}.",
            hint="Install the verifiers environment into this Python, or pass its .py file.",
        )
    if Path(spec.origin).name == "__init__.py":
        raise UsageError(
            f"`{target}` is a package; envkit import copies one module file.",
            hint="Pass the .py file that defines load_environment.",
        )
    return Path(spec.origin), target


def read_module(path: Path) -> ast.Module:
    """The module's syntax tree, checked for a top-level ``load_environment`` (the module is
    parsed, never executed, here).

    Raises:
        UsageError: the file cannot be read or parsed, or has no ``load_environment``.
    """
    try:
        tree = parse_python(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        raise UsageError(f"Cannot read {path}: {exc}.", hint="Fix the module first.") from None
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if ENTRY not in defined:
        raise UsageError(
            f"{path.name} defines no top-level `{ENTRY}()`: it is not a verifiers environment.",
            hint=f"A verifiers module defines `def {ENTRY}(**kwargs)` returning its environment.",
        )
    return tree


def pinned_requirements(tree: ast.Module, label: str) -> list[str]:
    """``dist==version`` for every third-party top-level import of the module, from the
    distributions installed in this Python; sorted.

    Raises:
        UsageError: an imported package is not installed here (its version is unknown).
    """
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    dists = importlib.metadata.packages_distributions()
    pins = set()
    for name in sorted(names - set(sys.stdlib_module_names) - {"__future__"}):
        found = dists.get(name)
        if not found:
            raise UsageError(
                f"{label} imports `{name}`, which is not installed here, so its version "
                "cannot be pinned.",
                hint=f"Install it into this Python (`pip install {name}`), then import again.",
            )
        dist = found[0]
        pins.add(f"{dist}=={importlib.metadata.version(dist)}")
    return sorted(pins)


def render(
    target: str, names: EnvNames, options: dict[str, str]
) -> tuple[dict[Path, bytes], TemplateSource]:
    """The files of the new environment and where they came from.

    Args:
        target: a ``.py`` path or module name.
        names: the new environment's name forms.
        options: ``load_environment`` keyword arguments (values parsed as JSON when they can be).

    Raises:
        UsageError: see :func:`locate`, :func:`read_module`, :func:`pinned_requirements`;
            the environment cannot be loaded, has no dataset or rubric, or its oracle (the
            row's answer) does not reach the rubric's maximum.
    """
    path, label = locate(target)
    tree = read_module(path)
    pins = pinned_requirements(tree, label)
    tpl = load_template(templates_dir() / "_import" / "verifiers")
    bridge_dir = tpl.path / "server"
    kwargs = {k.replace("-", "_"): _parse_value(v) for k, v in options.items()}
    doc = run_inspector(
        "verifiers_module.py",
        [str(bridge_dir), str(path), json.dumps(kwargs)],
        pins,
        what=f"the verifiers environment {label}",
    )
    _check_oracle(doc, label)
    context = render_context(names, tpl, {})
    context["dependencies"] = pins
    context["vars"] = {
        **tpl.vars,
        "module_label": label,
        "load_kwargs": kwargs,
        "rows": doc["rows"],
        "reward_funcs": doc["funcs"],
        "weights": [f"{w:g}" for w in doc["weights"]],
    }
    context["validation"] = {
        **tpl.validation,
        "reward_range": [float(doc["lo"]), float(doc["hi"])],
        "max_steps": int(doc["max_turns"]),
        "tags": ["verifiers", "rlvr" if doc["max_turns"] == 1 else "multi-turn"],
    }
    rendered = render_template(tpl, context)
    rendered[Path("server") / "source_env.py"] = path.read_bytes()
    plan = plan_document([dict(a) for a in doc["actions"]])
    rendered[Path(PROBE_PLAN_PATH)] = dumps(plan).encode("utf-8")
    source = TemplateSource(name=f"verifiers:{label}", origin=IMPORT_ORIGIN)
    return rendered, source


def _parse_value(text: str) -> object:
    """A ``--set`` value: its JSON value when it parses as JSON, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _check_oracle(doc: dict[str, Any], label: str) -> None:
    """The oracle's episode reached the rubric's maximum, and the reward range can be
    written in the manifest (one decimal: ``templates/_common/openenv.yaml.jinja``).

    Raises:
        UsageError: either does not hold.
    """
    for end in ("lo", "hi"):
        if abs(round(float(doc[end]), 1) - float(doc[end])) > 1e-9:
            raise UsageError(
                f"{label}: the rubric's weights give a reward range of "
                f"[{doc['lo']:g}, {doc['hi']:g}]; envkit writes it with one decimal.",
                hint="Use weights whose positive (and negative) sums have one decimal.",
            )
    reward = doc.get("oracle_reward")
    if reward is None or abs(float(reward) - float(doc["hi"])) > 1e-9:
        raise UsageError(
            f"{label}: answering row 0 with its `answer` earns {reward}, not the rubric's "
            f"maximum {doc['hi']:g}, so envkit has no oracle for it.",
            hint="envkit import needs rows whose `answer` the rubric scores at its maximum.",
        )
