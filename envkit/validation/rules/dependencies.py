"""EK222-EK223: dependency drift between the code, ``pyproject.toml`` and ``uv.lock``.

Facts: the Dockerfile ``envkit init`` writes (and OpenEnv's) installs the lock with
``uv sync --frozen --no-dev``, which installs what ``uv.lock`` records, not what
``pyproject.toml`` says, and never the development group. A server importing a module that
neither brings is built without complaint and then exits with ``ModuleNotFoundError``, the
commonest way a Space fails. The work is done in :mod:`envkit.deps` (uv and deptry, each in
a subprocess bounded in time); this module decides what is in scope and words the findings.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import PurePosixPath
from typing import Any

from envkit.deps import LOCK_NAME, check_lock, find_undeclared
from envkit.envdir.constants import OPENENV_REQUIREMENT
from envkit.envdir.project import resolve_python
from envkit.findings import Finding, Location, Severity, register
from envkit.fsutil import is_regular_inside
from envkit.validation.context import StaticContext
from envkit.validation.rules import project as project_rules

LOCK_STALE = register(
    "EK222",
    "uv-lock-outdated",
    Severity.ERROR,
    rfc008="static.dependency_pinning",
    summary="`uv.lock` is out of date with `pyproject.toml`.",
    what="`uv lock --check --offline` accepts the lock: it still satisfies `pyproject.toml`. "
    "When uv cannot decide offline (a new requirement it has never downloaded), the "
    "requirement names of `[project] dependencies` and `optional-dependencies` must be "
    "those the lock recorded; the finding says which way was used.",
    why="The image installs the lock (`uv sync --frozen`), not `pyproject.toml`: a dependency "
    "added without `uv lock` is not installed, and the container exits with "
    "`ModuleNotFoundError` after a build that succeeded.",
    example='`"numpy>=2"` added to `dependencies` after the last `uv lock`.',
    fix="Run `uv lock` in the environment directory and commit `uv.lock`.",
)
IMPORT_UNDECLARED = register(
    "EK223",
    "import-undeclared",
    Severity.ERROR,
    rfc008="static.dependency_pinning",
    summary="The server code imports a third-party module that `pyproject.toml` does not declare.",
    what="Every third-party module imported by the code the server runs (the app module and "
    "the environment's modules it imports, `models.py`, `client.py`, `__init__.py`) is "
    "provided by `[project] dependencies` or by what they depend on. deptry maps imports "
    "to distributions with the metadata of the environment's interpreter (`.venv` when "
    "present), so `import yaml` counts as `PyYAML`. `tests/`, `inference.py` and other "
    "scripts the app does not import are out of scope; `openenv` and the environment's "
    "own package never count.",
    why="`envkit run` uses the local venv, where a module installed by hand imports fine; the "
    "image installs only the declared dependencies (`uv sync --frozen --no-dev`), so the "
    "Space exits with `ModuleNotFoundError` at start-up.",
    example="`import requests_cache` in `server/env.py` after `uv pip install "
    f"requests-cache`, with `dependencies = ['{OPENENV_REQUIREMENT}']`.",
    fix="Add the distribution to `[project] dependencies` in `pyproject.toml`, run `uv lock`, "
    "and rebuild the image.",
)

_CODES = (LOCK_STALE.code, IMPORT_UNDECLARED.code)
_SEEDS = ("models.py", "client.py", "__init__.py")
_LAYOUT = ("server", "models", "client")


def check(ctx: StaticContext) -> Iterator[Finding]:
    data, error = ctx.pyproject()
    project = data.get("project") if isinstance(data, dict) else None
    if error is not None or not isinstance(project, dict):
        ctx.skip(
            _CODES,
            "no readable `[project]` table in pyproject.toml "
            f"({project_rules.PYPROJECT_MISSING.code}/{project_rules.PYPROJECT_INVALID.code})",
        )
        return

    python = resolve_python(ctx.root)
    with ThreadPoolExecutor(max_workers=1) as pool:
        # uv and deptry are separate processes: the lock check runs while deptry scans
        lock = _start_lock_check(ctx, project, python, pool)
        yield from _imports(ctx, project, python)
        if lock is not None:
            yield from _lock_findings(ctx, lock.result())


def _start_lock_check(
    ctx: StaticContext, project: dict[str, Any], python: str, pool: ThreadPoolExecutor
) -> Future[Any] | None:
    if not ctx.exists(LOCK_NAME):
        ctx.skip((LOCK_STALE.code,), f"no uv.lock ({project_rules.UV_LOCK_MISSING.code})")
        return None
    if not is_regular_inside(ctx.root / LOCK_NAME, ctx.root):
        ctx.skip((LOCK_STALE.code,), "uv.lock is not a regular file inside the environment")
        return None
    return pool.submit(check_lock, ctx.root, project, python)


def _lock_findings(ctx: StaticContext, lock: Any) -> Iterator[Finding]:
    if lock.state == "unknown":
        ctx.skip((LOCK_STALE.code,), lock.detail)
        return
    if lock.state != "stale":
        return
    if lock.method == "uv":
        how = "`uv lock --check --offline` says it needs to be updated"
    else:
        changes = [f"`{n}` is not in the lock" for n in lock.added]
        changes += [f"the lock still lists `{n}`" for n in lock.removed]
        how = f"{'; '.join(changes)} (requirement names compared: {lock.detail})"
    yield LOCK_STALE.finding(
        f"`uv.lock` must match `pyproject.toml`; {how}. The image installs the lock, so "
        "the container would miss what was added.",
        location=Location("uv.lock"),
    )


def _imports(ctx: StaticContext, project: dict[str, Any], python: str) -> Iterator[Finding]:
    if "dependencies" in (project.get("dynamic") or []):
        # read from requirements files by the build backend: what the image gets is not here
        ctx.skip((IMPORT_UNDECLARED.code,), "`[project] dependencies` is dynamic")
        return
    deps = project.get("dependencies") or []
    requires = [d for d in deps if isinstance(d, str)] if isinstance(deps, list) else []
    scan = find_undeclared(
        ctx.root,
        python,
        server_modules(ctx),
        requires=requires,
        first_party=first_party(ctx, project),
    )
    if scan.skipped:
        ctx.skip((IMPORT_UNDECLARED.code,), scan.skipped)
        return
    for imp in scan.undeclared:
        how = (
            "declared only for development or as an optional extra, which the image does "
            "not install"
            if imp.dev_only
            else f"not declared (the interpreter envkit asked, {python}, may have it "
            "installed by hand)"
        )
        yield IMPORT_UNDECLARED.finding(
            f"Every module the server imports must come from `[project] dependencies`; "
            f"`{imp.module}` is {how}. The container would exit with "
            f"`ModuleNotFoundError: No module named '{imp.module}'`.",
            location=Location(imp.file, imp.line, imp.column),
            module=imp.module,
        )


def first_party(ctx: StaticContext, project: dict[str, Any]) -> list[str]:
    """Top-level names of the environment's own package: the project name as a module, the
    setuptools ``packages`` and ``package-dir`` keys, the root folder's name, and the layout's
    modules (``server``, ``models``, ``client``: a missing one is EK205, not a dependency)."""
    names = {str(project.get("name", "")).replace("-", "_").replace(".", "_"), ctx.root.name}
    names.update(_LAYOUT)
    data, _ = ctx.pyproject()
    setuptools = ((data or {}).get("tool") or {}).get("setuptools") or {}
    if isinstance(setuptools, dict):
        for key in ("packages", "package-dir"):
            value = setuptools.get(key)
            if isinstance(value, list | dict):
                names.update(str(p).split(".")[0] for p in value)
    return sorted(n for n in names if n.isidentifier())


def server_modules(ctx: StaticContext) -> list[str]:
    """The environment's Python files the server runs: the app module and every local module
    it imports (transitively), plus ``models.py``, ``client.py`` and ``__init__.py``
    (installed with the package). Paths relative to the root, ``/``-separated."""
    todo = [f for f in (ctx.module_file(ctx.app.split(":", 1)[0]), *_SEEDS) if f]
    todo = [f for f in todo if ctx.exists(f)]
    seen: set[str] = set()
    while todo:
        rel = todo.pop()
        if rel in seen or rel.startswith("tests/"):
            continue
        seen.add(rel)
        tree = ctx.python(rel)
        if tree is not None:
            todo += [f for f in _local_imports(ctx, rel, tree) if f not in seen]
    return sorted(seen)


def _local_imports(ctx: StaticContext, rel: str, tree: ast.Module) -> Iterator[str]:
    """Files of the environment that ``rel`` imports (absolute or relative imports)."""
    here = PurePosixPath(rel).parent
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = here
                for _ in range(node.level - 1):
                    up = up.parent
                prefix = ".".join(p for p in up.parts if p not in ("", "."))
                base = ".".join(p for p in (prefix, base) if p)
            modules = [base] + [f"{base}.{a.name}" if base else a.name for a in node.names]
        else:
            continue
        for module in modules:
            found = ctx.module_file(module) if module else None
            if found:
                yield found
