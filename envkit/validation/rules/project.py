"""EK2xx project and packaging rules: `pyproject.toml` (its `[project]` table, the OpenEnv
dependency, the `server` script) and `uv.lock`.

Facts (docs/rules.md): OpenEnv 0.10's deployment check
(`openenv.cli._validation.validate_multi_mode_deployment`; 0.10's `openenv validate` path mode
no longer runs it) wants pyproject.toml, uv.lock, a `[project.scripts] server` entry containing
`:main` and an `openenv` (or legacy `openenv-core`) dependency.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from envkit.envdir.constants import OPENENV_REQUIREMENT
from envkit.findings import Finding, Location, Severity, register
from envkit.validation.context import StaticContext

PYPROJECT_MISSING = register(
    "EK201",
    "pyproject-missing",
    Severity.ERROR,
    rfc008="static.layout",
    summary="`pyproject.toml` is missing.",
    what="The environment has a `pyproject.toml`.",
    why="The Docker image, `uv run server`, pip installs and OpenEnv's deployment check "
    "(`openenv.cli._validation`) read the dependencies and the `server` script from it.",
    example="An environment with only `requirements.txt`.",
    fix="Add a PEP 621 `pyproject.toml` with `[project]` (name, version, dependencies "
    'including `openenv`) and `[project.scripts] server = "<pkg>.server.app:main"`.',
)
PYPROJECT_INVALID = register(
    "EK202",
    "pyproject-invalid",
    Severity.ERROR,
    rfc008="static.layout",
    summary="`pyproject.toml` is not valid TOML or not a valid PEP 621 `[project]` table.",
    what="`pyproject.toml` parses as TOML and has a `[project]` table with a string `name`, a "
    '`version` (or `dynamic = ["version"]`), a list of valid PEP 508 `dependencies` '
    "and a valid `requires-python`.",
    why="pip, uv and the Docker build refuse an invalid project table, late and with less context.",
    example='`dependencies = "openenv"` (a string instead of a list).',
    fix="Correct the key the message names.",
)
NO_OPENENV_DEP = register(
    "EK203",
    "openenv-dependency-missing",
    Severity.ERROR,
    rfc008="static.layout",
    summary="`[project] dependencies` does not include `openenv`.",
    what="`[project] dependencies` includes the OpenEnv runtime, `openenv` (0.10; "
    "`openenv-core` also counts here, see EK214), as OpenEnv's deployment check "
    "requires.",
    why="The server imports `openenv.core`; without the dependency the image builds and then "
    "fails at start-up with ModuleNotFoundError.",
    example='`dependencies = ["fastapi", "uvicorn"]`.',
    fix=f'Add `"{OPENENV_REQUIREMENT}"` to `[project] dependencies`.',
)
NO_SERVER_SCRIPT = register(
    "EK204",
    "server-script-missing",
    Severity.ERROR,
    rfc008="static.layout",
    summary="`[project.scripts]` has no `server` entry pointing at `...:main`.",
    what="`[project.scripts] server` exists and names a `main` function "
    "(`<pkg>.server.app:main`), as OpenEnv's deployment check requires.",
    why="`uv run server` and OpenEnv's multi-mode deployment start the environment through "
    "this script.",
    example='`[project.scripts] serve = "my_env.server.app:run"`.',
    fix='Add `server = "<package>.server.app:main"` under `[project.scripts]`.',
)

OPENENV_CORE_DEP = register(
    "EK214",
    "openenv-core-dependency",
    Severity.WARNING,
    summary="The environment depends on `openenv-core`, the distribution OpenEnv replaced by "
    "`openenv`.",
    what="`[project] dependencies` names `openenv` (0.10), not `openenv-core` (which stopped "
    "at 0.3.0).",
    why="`openenv` and `openenv-core` install the same packages and silently overwrite each "
    "other in one venv; TRL's OpenEnv harness imports `openenv.core.harness`, which only "
    "`openenv` has.",
    example="`dependencies = ['openenv-core>=0.3.0,<0.4']`.",
    fix=f'Replace it with `"{OPENENV_REQUIREMENT}"` (the import paths stay `openenv.core...`), '
    "or run `envkit migrate`, which also moves requirements files and Dockerfile installs.",
)
OPENENV_BOTH = register(
    "EK215",
    "openenv-dependency-conflict",
    Severity.ERROR,
    summary="The environment depends on both `openenv` and `openenv-core`.",
    what="`[project] dependencies` names only one OpenEnv distribution.",
    why="Both install the top-level packages `openenv` and `openenv_core`: whichever is "
    "installed last wins, file by file, so the server may import a mix of 0.3 and 0.10.",
    example=f"`dependencies = ['{OPENENV_REQUIREMENT}', 'openenv-core>=0.3']`.",
    fix="Remove `openenv-core` (or run `envkit migrate`).",
)
UV_LOCK_MISSING = register(
    "EK210",
    "uv-lock-missing",
    Severity.WARNING,
    rfc008="static.dependency_pinning",
    hygiene=True,
    summary="`uv.lock` is missing.",
    what="The environment has a `uv.lock` next to `pyproject.toml`.",
    why="OpenEnv's deployment check fails without it, and Docker/Space builds resolve "
    "dependencies afresh each time, so two builds can differ.",
    example="A fresh environment where `uv lock` was never run.",
    fix="Run `uv lock` in the environment directory and commit `uv.lock`.",
)

# the rules on which OpenEnv distribution the project depends on, besides EK203
_DISTRIBUTION_CODES = (OPENENV_CORE_DEP.code, OPENENV_BOTH.code)


def check(ctx: StaticContext) -> Iterator[Finding]:
    yield from _pyproject(ctx)
    if not ctx.exists("uv.lock"):
        yield UV_LOCK_MISSING.finding(
            "Expected `uv.lock` next to `pyproject.toml`; found none. OpenEnv's deployment "
            "check and reproducible Space builds need it.",
            location=Location("uv.lock"),
        )


def _pyproject(ctx: StaticContext) -> Iterator[Finding]:
    data, error = ctx.pyproject()
    codes = (PYPROJECT_INVALID.code, NO_OPENENV_DEP.code, NO_SERVER_SCRIPT.code)
    if data is None and error is None:
        ctx.skip(codes + _DISTRIBUTION_CODES, "no pyproject.toml")
        yield PYPROJECT_MISSING.finding(
            "Expected `pyproject.toml` in the environment directory; found none.",
            location=Location("pyproject.toml"),
        )
        return
    if error is not None:
        ctx.skip(codes[1:] + _DISTRIBUTION_CODES, "pyproject.toml is not TOML")
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(error))
        loc = (
            Location("pyproject.toml", int(m.group(1)), int(m.group(2)))
            if m
            else Location("pyproject.toml")
        )
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(error))
        yield PYPROJECT_INVALID.finding(
            f"`pyproject.toml` must be valid TOML: {msg}.", location=loc
        )
        return
    project = data.get("project")
    proj_line = ctx.line_of("pyproject.toml", r"^\s*\[project\]")

    def loc(pattern: str | None = None) -> Location:
        line = ctx.line_of("pyproject.toml", pattern) if pattern else None
        return Location("pyproject.toml", line or proj_line or 1, 1)

    if not isinstance(project, dict):
        ctx.skip(codes[1:] + _DISTRIBUTION_CODES, "no [project] table")
        yield PYPROJECT_INVALID.finding(
            "`pyproject.toml` must have a PEP 621 `[project]` table; found none. Most likely "
            "the metadata is in `[tool.poetry]` or `setup.py`.",
            location=loc(),
        )
        return
    if not isinstance(project.get("name"), str) or not project.get("name"):
        yield PYPROJECT_INVALID.finding(
            "`[project] name` must be a non-empty string.", location=loc(r"^\s*name\s*=")
        )
    if "version" not in project and "version" not in (project.get("dynamic") or []):
        yield PYPROJECT_INVALID.finding(
            "`[project]` must have `version` or list it in `dynamic`; it has neither.",
            location=loc(),
        )
    deps = project.get("dependencies", [])
    names: list[str] = []
    # ~40 ms of imports that `envkit rules` and `--explain` (which import this module) never use
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.utils import canonicalize_name

    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        yield PYPROJECT_INVALID.finding(
            f"`[project] dependencies` must be a list of strings; got {type(deps).__name__}.",
            location=loc(r"^\s*dependencies\s*="),
        )
        deps = []
    for dep in deps:
        try:
            names.append(canonicalize_name(Requirement(dep).name))
        except InvalidRequirement as exc:
            yield PYPROJECT_INVALID.finding(
                f"`[project] dependencies` entry {dep!r} is not a valid PEP 508 requirement: "
                f"{str(exc).splitlines()[0]}.",
                location=loc(re.escape(dep)),
            )
    rp = project.get("requires-python")
    if rp is not None:
        try:
            SpecifierSet(str(rp))
        except InvalidSpecifier:
            yield PYPROJECT_INVALID.finding(
                f"`[project] requires-python` must be a version specifier such as `>=3.10`; "
                f"got {rp!r}.",
                location=loc(r"^\s*requires-python\s*="),
            )
    yield from _openenv_dependency(names, deps, loc)
    scripts = project.get("scripts") if isinstance(project.get("scripts"), dict) else {}
    server = scripts.get("server")
    if not isinstance(server, str) or ":main" not in server:
        got = f"`server = {server!r}`" if server is not None else "no `server` entry"
        yield NO_SERVER_SCRIPT.finding(
            '`[project.scripts]` must have `server = "<package>.server.app:main"` (what '
            f"`uv run server` and OpenEnv's deployment check use); got {got}.",
            location=loc(r"^\s*server\s*=" if server is not None else r"^\s*\[project\.scripts\]"),
        )


def _openenv_dependency(names: list[str], deps: list[str], loc: Any) -> Iterator[Finding]:
    """EK203, EK214, EK215 (`openenv` 0.10 is the runtime; `openenv-core` is the
    distribution it replaced; both install the same packages)."""

    def where(name: str) -> Location:
        dep = next(
            (d for d in deps if re.match(rf"\s*{name.replace('-', '[-_.]')}\b", d, re.IGNORECASE)),
            None,
        )
        return loc(re.escape(dep) if dep else r"^\s*dependencies\s*=")

    has_new, has_core = "openenv" in names, "openenv-core" in names
    if has_new and has_core:
        yield OPENENV_BOTH.finding(
            "`[project] dependencies` must name one OpenEnv distribution; it names both "
            "`openenv` and `openenv-core`, which overwrite each other's files in one venv.",
            location=where("openenv-core"),
        )
    elif has_core:
        yield OPENENV_CORE_DEP.finding(
            "`[project] dependencies` should name `openenv` (0.10); it names `openenv-core`, "
            "the distribution `openenv` replaced (it stopped at 0.3.0).",
            location=where("openenv-core"),
            fix=f'Replace it with `"{OPENENV_REQUIREMENT}"`, or run `envkit migrate`.',
        )
    elif not has_new:
        yield NO_OPENENV_DEP.finding(
            "`[project] dependencies` must include `openenv` (the server imports "
            f"`openenv.core`); got {', '.join(names) or 'no dependencies'}.",
            location=loc(r"^\s*dependencies\s*="),
        )
