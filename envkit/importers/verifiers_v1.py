"""``envkit import verifiers:SOURCE NAME`` for a ``verifiers.v1`` taskset (verifiers 0.4).

verifiers 0.4.0 ships ``verifiers.v1`` only: an environment is a package exporting one
``vf.Taskset`` subclass in ``__all__`` (``vf-init NAME`` writes one). SOURCE is the package's
project directory (as ``vf-init`` writes it: ``pyproject.toml`` beside the package), the package
directory itself, or an importable package name. Hub ids (``owner/name[@version]``) need
Prime's own tooling and network; envkit says how to install one and import it by name.

The package is copied into the new environment (``server/vendor/PACKAGE/``) and played by
``server/verifiers_v1_bridge.py`` (templates/_import/verifiers_v1) in a worker interpreter
(verifiers 0.4.0 pins ``mcp==2.0.0``, openenv 0.10 needs ``mcp<2``: they never share a venv;
``server/vf_worker.py`` starts it): tasks as seeded episodes,
``TasksetConfig`` fields as reset options, ``@vf.tool``s as tools, ``@vf.stop`` as the end of
an episode, and verifiers' own ``Task.score`` on a ``vf.Trace`` as the reward. Tasksets that
need a container runtime, a judge model or a harness are refused with the reason. The
worker's requirements (``server/verifiers-requirements.txt``) pin ``verifiers`` and the
package's own dependencies exactly, at the versions the inspector ran.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

from envkit.catalog import load_template
from envkit.cookie import TemplateSource
from envkit.envdir.constants import PROBE_PLAN_PATH
from envkit.envdir.toml import read_pyproject
from envkit.errors import UsageError
from envkit.importers._inspect import run_inspector
from envkit.importers.reasoning_gym import IMPORT_ORIGIN
from envkit.names import EnvNames
from envkit.probe_plan import dumps, plan_document
from envkit.resources import templates_dir
from envkit.scaffold import render_context, render_template

VERIFIERS_PIN = "verifiers==0.4.0"
"""The verifiers release whose ``verifiers.v1`` API the bridge was written against."""

UV_REQUIREMENT = "uv>=0.5"
"""The environment's one extra dependency: uv starts the taskset's worker interpreter."""

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*(@[\w.+-]+)?$")
_SKIP = {"__pycache__"}


def is_taskset_source(target: str) -> bool:
    """Whether ``target`` names a verifiers.v1 taskset (a directory, a package name, a Hub
    id) rather than a classic module (a ``.py`` file or a module file)."""
    if target.endswith(".py"):
        return False
    path = Path(target).expanduser()
    if path.is_dir() or HUB_ID.match(target):
        return True
    try:
        spec = importlib.util.find_spec(target)
    except (ImportError, ValueError):
        return False
    return bool(spec and spec.origin and Path(spec.origin).name == "__init__.py")


def locate(target: str) -> tuple[Path, Path | None]:
    """The package directory of ``target`` and its project directory (``None`` when it has
    no ``pyproject.toml``).

    Raises:
        UsageError: a Hub id, a directory without exactly one package, an unknown module.
    """
    path = Path(target).expanduser()
    if not path.is_dir() and HUB_ID.match(target):
        name = target.split("@")[0].split("/")[1].replace("-", "_")
        raise UsageError(
            f"`{target}` is an Environments Hub id; envkit does not reach Prime's Hub.",
            hint=f"Install it with Prime's CLI (`prime env install {target}`), then "
            f"`envkit import verifiers:{name} NAME`.",
        )
    if path.is_dir():
        path = path.resolve()
        if (path / "__init__.py").is_file():
            project = path.parent if (path.parent / "pyproject.toml").is_file() else None
            return path, project
        packages = [p for p in sorted(path.iterdir()) if (p / "__init__.py").is_file()]
        if len(packages) != 1:
            raise UsageError(
                f"{path} holds {len(packages)} Python packages; envkit imports one taskset "
                "package.",
                hint="Pass the package directory itself (the folder with __init__.py).",
            )
        return packages[0], path if (path / "pyproject.toml").is_file() else None
    spec = importlib.util.find_spec(target)
    if spec is None or not spec.origin:
        raise UsageError(
            f"No package `{target}` is importable here.",
            hint="Install the taskset into this Python, or pass its directory.",
        )
    return Path(spec.origin).parent, None


def project_dependencies(project: Path | None) -> list[str]:
    """Distribution names the project depends on, less verifiers (pinned by envkit)."""
    if project is None:
        return []
    doc, error = read_pyproject(project)
    if error is not None:
        raise UsageError(
            f"Cannot read {project / 'pyproject.toml'}: {error}.",
            hint="Fix the file (it must be UTF-8 TOML under 1 MiB), or pass the package directory.",
        )
    names = []
    for req in (doc or {}).get("project", {}).get("dependencies", []):
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", str(req))
        if match and match.group(1).lower().replace("_", "-") != "verifiers":
            names.append(match.group(1))
    return names


def package_files(package: Path) -> dict[Path, bytes]:
    """Every file of the package (compiled files left out), by path relative to its parent."""
    files = {}
    for path in sorted(package.rglob("*")):
        rel = path.relative_to(package.parent)
        if path.is_file() and not _SKIP.intersection(rel.parts) and path.suffix != ".pyc":
            files[rel] = path.read_bytes()
    return files


def render(
    target: str, names: EnvNames, options: dict[str, str]
) -> tuple[dict[Path, bytes], TemplateSource]:
    """The files of the new environment and where they came from.

    Args:
        target: a package or project directory, an importable package name, or a Hub id.
        names: the new environment's name forms.
        options: ``TasksetConfig`` fields (values parsed as JSON when they can be).

    Raises:
        UsageError: see :func:`locate`; the taskset cannot be loaded or played (the reason
            names the feature: a container runtime, a judge model, a harness), has no
            reference ``answer``, or its oracle does not reach the maximum.
    """
    package, project = locate(target)
    label = package.name if project is None else f"{project.name}/{package.name}"
    deps = project_dependencies(project)
    tpl = load_template(templates_dir() / "_import" / "verifiers_v1")
    kwargs = {k.replace("-", "_"): _parse_value(v) for k, v in options.items()}
    doc = run_inspector(
        "verifiers_v1_taskset.py",
        [str(tpl.path / "server"), str(package.parent), package.name, json.dumps(kwargs)]
        + [json.dumps(deps)],
        [VERIFIERS_PIN, *deps],
        what=f"the verifiers taskset {label}",
    )
    _check(doc, label)
    context = render_context(names, tpl, {})
    # verifiers 0.4.0 pins mcp==2.0.0 and openenv 0.10 needs mcp<2: the taskset runs in a
    # worker interpreter of its own (server/vf_worker.py), which uv builds from this file.
    context["dependencies"] = [UV_REQUIREMENT]
    context["vars"] = {
        **tpl.vars,
        "module_label": label,
        "package": package.name,
        "load_kwargs": kwargs,
        "rows": doc["rows"],
        "reward_funcs": doc["funcs"],
        "weights": [f"{w:g}" for w in doc["weights"]],
        "tools": doc["tools"],
        "options": doc["options"],
        "verifiers_version": doc["verifiers"],
    }
    context["validation"] = {
        **tpl.validation,
        "reward_range": [float(doc["lo"]), float(doc["hi"])],
        "max_steps": int(doc["max_turns"]),
        "tags": ["verifiers", "tools" if doc["tools"] else "rlvr"],
    }
    rendered = render_template(tpl, context)
    for rel, data in package_files(package).items():
        rendered[Path("server") / "vendor" / rel] = data
    requirements = "\n".join([VERIFIERS_PIN, *doc["pins"]]) + "\n"
    rendered[Path("server") / "verifiers-requirements.txt"] = requirements.encode("utf-8")
    rendered[Path(PROBE_PLAN_PATH)] = dumps(plan_document(list(doc["actions"]))).encode("utf-8")
    return rendered, TemplateSource(name=f"verifiers:{label}", origin=IMPORT_ORIGIN)


def _parse_value(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _check(doc: dict[str, Any], label: str) -> None:
    """The taskset can be played, has an oracle that reaches the maximum, and a reward range
    the manifest can hold (one decimal).

    Raises:
        UsageError: one does not hold; the message names the reason.
    """
    if doc.get("refused"):
        raise UsageError(
            f"{label} cannot be played as an OpenEnv environment: {doc['refused']}.",
            hint="envkit imports tasksets scored from the conversation alone.",
        )
    if not doc.get("has_answer"):
        raise UsageError(
            f"{label}: its tasks carry no `answer` field, so envkit has no oracle for it.",
            hint="Add the reference answer to the TaskData (`answer: str`).",
        )
    for end in ("lo", "hi"):
        if abs(round(float(doc[end]), 1) - float(doc[end])) > 1e-9:
            raise UsageError(
                f"{label}: the @vf.reward weights give a reward range of "
                f"[{doc['lo']:g}, {doc['hi']:g}]; envkit writes it with one decimal.",
                hint="Use weights whose positive (and negative) sums have one decimal.",
            )
    reward = doc.get("oracle_reward")
    if reward is None or abs(float(reward) - float(doc["hi"])) > 1e-9:
        raise UsageError(
            f"{label}: answering task 0 with its `answer` scores {reward}, not the maximum "
            f"{doc['hi']:g}, so envkit has no oracle for it.",
            hint="envkit import needs tasks whose `answer` the rewards score at their maximum.",
        )
