"""The dependency on OpenEnv: ``pyproject.toml``, ``requirements*.txt`` and Dockerfile ``RUN``
lines name ``openenv`` instead of the superseded ``openenv-core``; ``server/Dockerfile`` moves to
the root."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError

from envkit.envdir import EnvDir
from envkit.envdir.constants import DOCKERFILE_NAME, OPENENV_REQUIREMENT
from envkit.envdir.toml import PYPROJECT_NAME
from envkit.errors import MigrationRefused
from envkit.migrate.changes import FileChange, add_change, rel_path

MOVED_DOCKERFILE = (
    "moved from server/Dockerfile (a Docker Space and RFC 008's "
    "execution.dockerfile want it at the root)"
)
# A requirement naming the superseded distribution, or `openenv` with the `core` extra.
_REQ_NAME = re.compile(r"^\s*(openenv[-_.]core|openenv)\s*(\[[^\]]*\])?", re.IGNORECASE)
# The same inside a Dockerfile RUN line (pip/uv install arguments), quoted or not.
_DOCKER_REQ = re.compile(
    r"""(?P<q>["']?)openenv[-_.]core(?:\[[^\]\s]*\])?(?:\s*[<>=!~][^"'\s]*)?(?P=q)""", re.IGNORECASE
)


def _requirement_kind(req: str) -> str | None:
    """``"core"`` for an openenv-core requirement (or ``openenv[core]``), ``"openenv"`` for a
    plain openenv one, else ``None``."""
    m = _REQ_NAME.match(req)
    if not m:
        return None
    rest = req[m.end() :].lstrip()
    if rest and rest[0] not in "<>=!~;@,(" and not rest.startswith("["):
        return None  # e.g. `openenv-something`: another distribution
    name = m.group(1).lower().replace("_", "-").replace(".", "-")
    extras = (m.group(2) or "").lower()
    if name == "openenv-core" or "core" in re.split(r"[\[\],\s]+", extras):
        return "core"
    return "openenv"


def _new_requirement(old: str) -> str:
    """``openenv-core[x]>=0.3; python_version>='3.10'`` -> the OpenEnv requirement with the same marker
    (the environment marker is kept)."""
    marker = old.split(";", 1)[1].strip() if ";" in old else ""
    return f"{OPENENV_REQUIREMENT}; {marker}" if marker else OPENENV_REQUIREMENT


def _migrate_dependency_list(items: list[str]) -> tuple[list[str | None], list[str]]:
    """Per item: the new string, the same one, or ``None`` to drop; plus summary lines."""
    kinds = [_requirement_kind(s) for s in items]
    has_plain = "openenv" in kinds
    out: list[str | None] = []
    summary: list[str] = []
    replaced = False
    for item, kind in zip(items, kinds):
        if kind != "core":
            out.append(item)
        elif has_plain or replaced:
            out.append(None)
            summary.append(
                f"dropped {item!r} (openenv is already declared; the two "
                "distributions overwrite each other)"
            )
        else:
            new = _new_requirement(item)
            out.append(new)
            replaced = True
            summary.append(f"{item!r} -> {new!r}")
    return out, summary


def _migrate_pyproject(root: Path, path: Path) -> FileChange | None:
    """The OpenEnv requirement in ``[project] dependencies``, ``optional-dependencies`` and
    ``[dependency-groups]`` (tomlkit keeps comments and layout); ``None``: no change.

    Raises:
        MigrationRefused: the file is not TOML (``PATH:LINE:COL``).
    """
    text = path.read_text(encoding="utf-8")
    try:
        doc = tomlkit.parse(text)
    except ParseError as exc:
        raise MigrationRefused(
            f"{rel_path(root, path)}:{exc.line}:{exc.col}: cannot parse TOML ({exc}); migrate "
            "changed nothing.",
            hint="Fix the TOML syntax, then run `envkit migrate` again.",
        ) from None
    summary: list[str] = []
    project = doc.get("project")
    arrays: list[Any] = []
    if isinstance(project, dict):
        if isinstance(project.get("dependencies"), list):
            arrays.append(project["dependencies"])
        extras = project.get("optional-dependencies")
        if isinstance(extras, dict):
            arrays += [v for v in extras.values() if isinstance(v, list)]
    groups = doc.get("dependency-groups")
    if isinstance(groups, dict):
        arrays += [v for v in groups.values() if isinstance(v, list)]
    for arr in arrays:
        strings = [str(v) if isinstance(v, str) else "" for v in arr]
        new, lines = _migrate_dependency_list(strings)
        if not lines:
            continue
        summary += lines
        for i in reversed(range(len(new))):
            if new[i] is None:
                del arr[i]
            elif new[i] != strings[i]:
                arr[i] = new[i]
    if not summary:
        return None
    return FileChange(rel_path(root, path), text, tomlkit.dumps(doc), summary)


def _migrate_requirements(root: Path, path: Path) -> FileChange | None:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    bodies: list[str] = []
    for line in lines:
        body = line.split("#", 1)[0].strip()
        bodies.append("" if body.startswith("-") else body)
    new, summary = _migrate_dependency_list(bodies)
    if not summary:
        return None
    out: list[str] = []
    for line, body, repl in zip(lines, bodies, new):
        if repl is None:
            continue
        if body and repl != body:
            line = line.replace(body, repl, 1)
        out.append(line)
    return FileChange(rel_path(root, path), text, "".join(out), summary)


def _migrate_dockerfile_text(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        return (
            f'"{OPENENV_REQUIREMENT}"'
            if not m.group("q")
            else f"{m.group('q')}{OPENENV_REQUIREMENT}{m.group('q')}"
        )

    out: list[str] = []
    in_run = False
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        starts_run = stripped[:4].upper() == "RUN " or stripped[:4].upper() == "RUN\t"
        if (in_run or starts_run) and not stripped.startswith("#"):
            line = _DOCKER_REQ.sub(repl, line)
        if starts_run or in_run:
            in_run = line.rstrip().endswith("\\")
        out.append(line)
    return "".join(out)


def _migrate_dockerfile(root: Path, path: Path) -> FileChange | None:
    text = path.read_text(encoding="utf-8")
    new = _migrate_dockerfile_text(text)
    if new == text:
        return None
    return FileChange(rel_path(root, path), text, new, ["openenv-core -> openenv in RUN lines"])


def migrate_dependencies(env: EnvDir) -> list[FileChange]:
    """pyproject.toml, then ``requirements*.txt`` at the root and in ``server/``, sorted.

    Raises:
        MigrationRefused: pyproject.toml cannot be parsed.
    """
    root = env.root
    changes: list[FileChange] = []
    pyproject = root / PYPROJECT_NAME
    if pyproject.is_file():
        add_change(changes, _migrate_pyproject(root, pyproject))
    for req in sorted([*root.glob("requirements*.txt"), *root.glob("server/requirements*.txt")]):
        add_change(changes, _migrate_requirements(root, req))
    return changes


def migrate_dockerfiles(env: EnvDir) -> tuple[list[FileChange], bool]:
    """Move ``server/Dockerfile`` to the root when there is no root one, else migrate each
    Dockerfile's ``RUN`` lines in place.

    Returns:
        ``(changes, has_root_dockerfile)``: the second is true when a root Dockerfile exists
        or is about to (the move).
    """
    root = env.root
    root_df, server_df = env.dockerfile_path, root / "server" / DOCKERFILE_NAME
    if not root_df.is_file() and server_df.is_file():
        text = server_df.read_text(encoding="utf-8")
        new = _migrate_dockerfile_text(text)
        summary = [MOVED_DOCKERFILE] + (
            ["openenv-core -> openenv in RUN lines"] if new != text else []
        )
        return [
            FileChange(DOCKERFILE_NAME, None, new, summary),
            FileChange("server/Dockerfile", text, None, ["moved to Dockerfile"]),
        ], True
    changes: list[FileChange] = []
    for df in (root_df, server_df):
        if df.is_file():
            add_change(changes, _migrate_dockerfile(root, df))
    return changes, root_df.is_file()
