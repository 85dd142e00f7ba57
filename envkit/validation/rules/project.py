"""EK2xx project and packaging rules (pyproject, files, README card, inference script).

Facts (docs/rules.md): OpenEnv 0.10's deployment check
(`openenv.cli._validation.validate_multi_mode_deployment`; 0.10's `openenv validate` path mode
no longer runs it) wants pyproject.toml, uv.lock, a `[project.scripts] server` entry containing
`:main`, an `openenv` (or legacy `openenv-core`) dependency, and `def main(` plus an
`if __name__ == "__main__"` guard in server/app.py. `create_app(...,
max_concurrent_envs=N)` defaults to 1 and N > 1 needs `SUPPORTS_CONCURRENT_SESSIONS = True`.
TRL needs capacity >= its generation batch size.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from envkit.envdir.app_source import call_capacity, create_app_call, module_assigns
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
FILES_MISSING = register(
    "EK205",
    "required-file-missing",
    Severity.ERROR,
    rfc008="static.layout",
    summary="A file of the OpenEnv layout is missing (models.py, client.py, server/app.py, ...).",
    what="`models.py`, `client.py`, `__init__.py`, `server/__init__.py` and `server/app.py` "
    "exist, as in `openenv init`'s layout (an MCP environment whose `server/app.py` "
    "imports its Action and Observation from openenv's `mcp_types` needs no `models.py`).",
    why="`server/app.py` builds the app from `models.py`; clients import `client.py` from the "
    "package; the `__init__.py` files make the relative imports work when installed.",
    example="An environment whose models live in `server/models.py` only.",
    fix="Create the missing file (see `envkit init` for the layout).",
)
SERVER_NO_MAIN = register(
    "EK206",
    "server-main-missing",
    Severity.ERROR,
    rfc008="static.layout",
    summary='`server/app.py` lacks `def main(...)` or an `if __name__ == "__main__":` guard '
    "calling it.",
    what="`server/app.py` defines a top-level `main` function and calls it under "
    '`if __name__ == "__main__":` (what OpenEnv\'s deployment check looks for).',
    why="The `server` console script and `python -m server.app` need both; OpenEnv's "
    "deployment check (`openenv.cli._validation`) fails without them.",
    example="A `server/app.py` that only defines `app = create_app(...)`.",
    fix='Add `def main(host: str = "127.0.0.1", port: int = 8000): uvicorn.run(app, '
    'host=host, port=port)` and `if __name__ == "__main__": main()`.',
)
MODELS_MISSING = register(
    "EK207",
    "action-observation-missing",
    Severity.ERROR,
    rfc008="static.layout",
    summary="`models.py` defines no `Action` or no `Observation` subclass.",
    what="`models.py` defines a class deriving from openenv's `Action` and one deriving from "
    "`Observation` (found by reading the source, nothing is imported).",
    why="`create_app` needs both classes; the action class is the schema every agent and the "
    "fuzzer generate actions from.",
    example="`class MyAction(BaseModel)` instead of `class MyAction(Action)`.",
    fix="Derive the classes from `openenv.core.env_server.types.Action` and `Observation`.",
)
CARD_INVALID = register(
    "EK208",
    "space-card-invalid",
    Severity.ERROR,
    summary="README.md front matter is missing or invalid for a Docker Space.",
    what="README.md starts with YAML front matter with `title`, `sdk: docker`, `app_port` "
    "equal to the manifest port, named colours, `short_description` <= 60 characters "
    "and `tags` including `openenv`.",
    why="The Hub rejects hex colours and long descriptions at upload time, and routes to port "
    "7860 when `app_port` is missing, so the Space never answers.",
    example="`colorFrom: '#00C9FF'` or no `app_port`.",
    fix="Fix the key the message names (`envkit push` repairs the card in its staged copy).",
)
INFERENCE_SCRIPT = register(
    "EK209",
    "inference-script-invalid",
    Severity.WARNING,
    hygiene=True,
    summary="`inference.py` is missing, does not read API_BASE_URL, MODEL_NAME, HF_TOKEN and "
    "LOCAL_IMAGE_NAME, or does not print the hackathon's [START]/[STEP]/[END] lines.",
    what="`inference.py` exists at the root, reads the `API_BASE_URL`, `MODEL_NAME`, "
    "`HF_TOKEN` and `LOCAL_IMAGE_NAME` environment variables, and prints one line of each "
    "kind in the hackathon's layout: `[START] task=<task> env=<env> model=<model>`, "
    "`[STEP] step=<n> action=<action> reward=<0.00> done=<true|false> error=<msg|null>` "
    "(the reward with two decimals) and `[END] success=<true|false> steps=<n> "
    "score=<0..1> rewards=<r1,r2,...>`. Checked by reading the source (the strings it "
    "prints, with each interpolated value as one token); the script is never run.",
    why="Hackathon submissions and baseline reports run `python inference.py` with these "
    "variables set and grade what it prints by these lines: a script that ignores the "
    "variables uses the wrong model or no key, and one that prints another layout scores "
    "nothing. A hygiene warning: environments outside such a submission need no script.",
    example='An `inference.py` that hard-codes `model="gpt-4o"`, or prints '
    '`f"episode {i}: return {total:.3f}"` instead of the `[START]`/`[STEP]`/`[END]` lines.',
    fix="Start from the `inference.py` `envkit init` writes: it reads the four variables, "
    "prints the three lines (`[END]` also after an error) and scores each episode in [0, 1]; "
    "try it offline with `envkit serve-oracle` (docs/offline-openai.md).",
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
CAPACITY_ONE = register(
    "EK211",
    "capacity-one",
    Severity.WARNING,
    summary="The server allows a single WebSocket session (`max_concurrent_envs=1`).",
    what="`create_app(..., max_concurrent_envs=N)` in the app module has N > 1 (the default is 1).",
    why="TRL opens one session per generation in a batch; with capacity 1 the second one gets "
    "CAPACITY_REACHED and training stops.",
    example="`create_app(Env, Action, Observation, max_concurrent_envs=1)`.",
    fix="Pass `max_concurrent_envs=16` (at least your generation batch size) and make the "
    "environment keep all state on the instance.",
)
MODULE_STATE = register(
    "EK212",
    "concurrent-shared-state",
    Severity.WARNING,
    rfc008="runtime.episode_isolation",
    summary="A class declaring `SUPPORTS_CONCURRENT_SESSIONS = True` keeps module- or "
    "class-level mutable state.",
    what="In the module of a class with `SUPPORTS_CONCURRENT_SESSIONS = True`, no function "
    "mutates module-level containers or rebinds globals (`global x`), and no method "
    "mutates a class-level container through `self`. A global set once per process "
    "(the function returns early when it is already set: a lazy import, a download "
    "flag) and a dict used as a memo (`if key not in CACHE: CACHE[key] = ...`) are not "
    "episode state and are not reported.",
    why="Concurrent sessions each get an instance but share the module and the class: one "
    "session's episode then leaks into another's (a heuristic: the runtime check EK4xx "
    "confirms interference by running sessions side by side).",
    example="`HISTORY = []` at module level and `HISTORY.append(action)` in `step()`.",
    fix="Move the state into `__init__` (`self.history = []`), or set "
    "`SUPPORTS_CONCURRENT_SESSIONS = False` and capacity 1.",
)
CONCURRENCY_UNDECLARED = register(
    "EK213",
    "concurrency-undeclared",
    Severity.ERROR,
    rfc008="runtime.episode_isolation",
    summary="`max_concurrent_envs` > 1 but the environment class does not declare "
    "`SUPPORTS_CONCURRENT_SESSIONS = True`.",
    what="When the app allows more than one session, the environment class passed to "
    "`create_app` sets `SUPPORTS_CONCURRENT_SESSIONS = True`.",
    why="OpenEnv's `create_app` refuses to start such a server, so the Space crashes at start-up.",
    example="`create_app(MyEnv, ..., max_concurrent_envs=8)` with `MyEnv` not declaring it.",
    fix="Set `SUPPORTS_CONCURRENT_SESSIONS = True` on the class once its state lives on the "
    "instance, or lower `max_concurrent_envs` to 1.",
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

REQUIRED_FILES = ("__init__.py", "models.py", "client.py", "server/__init__.py", "server/app.py")
INFERENCE_VARS = ("API_BASE_URL", "MODEL_NAME", "HF_TOKEN", "LOCAL_IMAGE_NAME")
# The hackathon's log lines (the OpenEnv hackathon's sample inference.py, copied into many
# Spaces): tag -> (the layout as documented, a regex over one printed line as written in the
# source, every interpolated value rendered as one `{...}` token).
INFERENCE_LINES = {
    "[START]": (
        "[START] task=<task> env=<env> model=<model>",
        re.compile(r"\[START\] task=\S+ env=\S+ model=\S+"),
    ),
    "[STEP]": (
        "[STEP] step=<n> action=<action> reward=<0.00> done=<true|false> error=<msg|null>",
        re.compile(r"\[STEP\] step=\S+ action=\S+ reward=(\S+) done=\S+ error=\S+"),
    ),
    "[END]": (
        "[END] success=<true|false> steps=<n> score=<0..1> rewards=<r1,r2,...>",
        re.compile(r"\[END\] success=\S+ steps=\S+ score=\S+ rewards=\S*"),
    ),
}
_MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "add",
        "update",
        "pop",
        "popitem",
        "clear",
        "setdefault",
        "remove",
        "discard",
        "appendleft",
        "extendleft",
        "sort",
        "reverse",
        "__setitem__",
    }
)
_MUTABLE_CTORS = frozenset(
    {"list", "dict", "set", "defaultdict", "OrderedDict", "Counter", "deque", "bytearray"}
)


def check(ctx: StaticContext) -> Iterator[Finding]:
    yield from _pyproject(ctx)
    yield from _files(ctx)
    yield from _server_main(ctx)
    yield from _models(ctx)
    yield from _card(ctx)
    yield from _inference(ctx)
    if not ctx.exists("uv.lock"):
        yield UV_LOCK_MISSING.finding(
            "Expected `uv.lock` next to `pyproject.toml`; found none. OpenEnv's deployment "
            "check and reproducible Space builds need it.",
            location=Location("uv.lock"),
        )
    yield from _concurrency(ctx)


# -- pyproject ---------------------------------------------------------------------------------
def _pyproject(ctx: StaticContext) -> Iterator[Finding]:
    data, error = ctx.pyproject()
    codes = ("EK202", "EK203", "EK204")
    if data is None and error is None:
        ctx.skip(codes + ("EK214", "EK215"), "no pyproject.toml")
        yield PYPROJECT_MISSING.finding(
            "Expected `pyproject.toml` in the environment directory; found none.",
            location=Location("pyproject.toml"),
        )
        return
    if error is not None:
        ctx.skip(("EK203", "EK204", "EK214", "EK215"), "pyproject.toml is not TOML")
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
        ctx.skip(("EK203", "EK204", "EK214", "EK215"), "no [project] table")
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


# -- files and modules -------------------------------------------------------------------------
def _mcp_models(ctx: StaticContext) -> tuple[str, str] | None:
    """The (Action, Observation) class names `server/app.py` imports from openenv's MCP types
    (`openenv.core.env_server.mcp_types`: `CallToolAction`, `CallToolObservation`, ...), or
    ``None``. Such an MCP environment (OpenEnv's echo_env) has no `models.py` of its own
    (docs/realworld.md)."""
    tree = ctx.python("server/app.py")
    if tree is None:
        return None
    action = observation = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] in ("openenv", "openenv_core")
            and node.module.rsplit(".", 1)[-1] == "mcp_types"
        ):
            for alias in node.names:
                if alias.name.endswith("Action"):
                    action = action or alias.name
                elif alias.name.endswith("Observation"):
                    observation = observation or alias.name
    return (action, observation) if action and observation else None


def _files(ctx: StaticContext) -> Iterator[Finding]:
    for rel in REQUIRED_FILES:
        if rel == "models.py" and not ctx.exists(rel) and (mcp := _mcp_models(ctx)):
            ctx.skip(
                ["EK207"],
                f"an MCP environment: its models are openenv's `{mcp[0]}` and "
                f"`{mcp[1]}` (server/app.py)",
            )
            continue
        if not ctx.exists(rel):
            yield FILES_MISSING.finding(
                f"Expected `{rel}` (part of the OpenEnv environment layout); found none.",
                location=Location(rel),
            )


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    parts = [node.test.left, *node.test.comparators]
    names = any(isinstance(p, ast.Name) and p.id == "__name__" for p in parts)
    main = any(isinstance(p, ast.Constant) and p.value == "__main__" for p in parts)
    return names and main


def _server_main(ctx: StaticContext) -> Iterator[Finding]:
    rel = "server/app.py"
    if not ctx.exists(rel):
        ctx.skip(["EK206"], "no server/app.py")
        return
    tree = ctx.python(rel)
    if tree is None:
        err = ctx.syntax_error(rel)
        line = err.lineno if err else None
        yield SERVER_NO_MAIN.finding(
            f"`{rel}` must be valid Python with `def main(...)`; it has a syntax error"
            f"{f' at line {line}' if line else ''}.",
            location=Location(rel, line),
            fix=f"Fix the syntax error in `{rel}`.",
        )
        return
    has_main = any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "main"
        for n in tree.body
    )
    guards = [n for n in tree.body if _is_main_guard(n)]
    calls_main = any(
        isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "main"
        for g in guards
        for c in ast.walk(g)
    )
    if not has_main:
        yield SERVER_NO_MAIN.finding(
            f"`{rel}` must define a top-level `def main(...)` (the `server` script's entry "
            "point); it does not.",
            location=Location(rel, 1),
        )
    elif not calls_main:
        where = (
            Location(rel, guards[0].lineno, guards[0].col_offset + 1)
            if guards
            else Location(rel, len((ctx.text(rel) or "").splitlines()) or 1)
        )
        yield SERVER_NO_MAIN.finding(
            f'`{rel}` must call `main()` under `if __name__ == "__main__":`; '
            f"{'the guard does not call it' if guards else 'there is no such guard'}.",
            location=where,
        )


def _base_names(cls: ast.ClassDef) -> list[str]:
    out = []
    for b in cls.bases:
        if isinstance(b, ast.Subscript):
            b = b.value
        if isinstance(b, ast.Name):
            out.append(b.id)
        elif isinstance(b, ast.Attribute):
            out.append(b.attr)
    return out


def _models(ctx: StaticContext) -> Iterator[Finding]:
    rel = "models.py"
    tree = ctx.python(rel)
    if tree is None:
        if ctx.exists(rel):
            err = ctx.syntax_error(rel)
            yield MODELS_MISSING.finding(
                f"`{rel}` must be valid Python defining the Action and Observation classes; it "
                f"has a syntax error{f' at line {err.lineno}' if err else ''}.",
                location=Location(rel, err.lineno if err else None),
                fix=f"Fix the syntax error in `{rel}`.",
            )
        else:
            ctx.skip(["EK207"], "no models.py")
        return
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    local = {c.name: c for c in classes}

    def derives(cls: ast.ClassDef, kind: str, seen: frozenset[str] = frozenset()) -> bool:
        for name in _base_names(cls):
            if name == kind or name.endswith(kind):
                return True
            if name in local and name not in seen and derives(local[name], kind, seen | {name}):
                return True
        return False

    names = ", ".join(f"`{c.name}`" for c in classes)
    found = f"classes {names}" if classes else "no classes"
    for kind in ("Action", "Observation"):
        if not any(derives(c, kind) for c in classes):
            yield MODELS_MISSING.finding(
                f"`{rel}` must define a subclass of openenv's `{kind}`; found {found}"
                " deriving from none. Most likely it derives from `pydantic.BaseModel`.",
                location=Location(rel, 1),
            )


# -- README card -------------------------------------------------------------------------------
def _card(ctx: StaticContext) -> Iterator[Finding]:
    from envkit.envdir.card import CardSyntaxError, check_card, read_card

    rel = "README.md"
    text = ctx.text(rel)
    if text is None:
        yield CARD_INVALID.finding(
            "Expected `README.md` with Docker Space front matter (the Space card); found none.",
            location=Location(rel),
        )
        return
    try:
        card = read_card(text)
    except CardSyntaxError as exc:
        yield CARD_INVALID.finding(f"`README.md`: {exc}.", location=Location(rel, exc.line))
        return
    if card is None:
        yield CARD_INVALID.finding(
            "`README.md` must start with YAML front matter between `---` lines (the Space "
            "card: title, sdk: docker, app_port, ...); it has none.",
            location=Location(rel, 1),
        )
        return
    for problem in check_card(card, ctx.port):
        yield CARD_INVALID.finding(problem.message, location=Location(rel, problem.line))


# -- inference script --------------------------------------------------------------------------
def _inference(ctx: StaticContext) -> Iterator[Finding]:
    rel = "inference.py"
    if not ctx.exists(rel):
        yield INFERENCE_SCRIPT.finding(
            "Expected `inference.py` (the baseline agent reading API_BASE_URL, MODEL_NAME, "
            "HF_TOKEN and LOCAL_IMAGE_NAME); found none.",
            location=Location(rel),
        )
        return
    tree = ctx.python(rel)
    if tree is None:
        strings = set(re.findall(r"[A-Z_]+", ctx.text(rel) or ""))
    else:
        strings = {
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
    missing = [v for v in INFERENCE_VARS if v not in strings]
    if missing:
        yield INFERENCE_SCRIPT.finding(
            f"`inference.py` must read the environment variables {', '.join(INFERENCE_VARS)}; "
            f"it never mentions {', '.join(f'`{m}`' for m in missing)}.",
            location=Location(rel, 1),
        )
    if tree is None:
        return  # a syntax error is EK2xx's business; the layout cannot be read reliably
    problems, line = _log_line_problems(_printed_lines(tree))
    if problems:
        yield INFERENCE_SCRIPT.finding(
            f"`inference.py` does not print the hackathon's log lines: {'; '.join(problems)}.",
            location=Location(rel, line or 1),
        )


def _rendered(node: ast.AST) -> str | None:
    """The text a string expression prints, each interpolated value as one token (``{}``,
    or ``{:spec}`` with its format spec), or ``None`` when ``node`` is not a string."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                spec = _rendered(value.format_spec) if value.format_spec else ""
                parts.append("{" + (f":{spec}" if spec else "") + "}")
            else:
                parts.append(_rendered(value) or "")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _rendered(node.left), _rendered(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    return None


def _printed_lines(tree: ast.Module) -> list[tuple[str, int]]:
    """(text, line) of every one-line string in the script that starts with a log tag: string
    literals and f-strings, and ``print(a, b, ...)`` calls joined with spaces as print does."""
    out = []
    for node in ast.walk(tree):
        text = None
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
            parts = [_rendered(a) for a in node.args if not isinstance(a, ast.Starred)]
            text = " ".join(p if p is not None else "{}" for p in parts)
        elif isinstance(node, ast.Constant | ast.JoinedStr | ast.BinOp):
            text = _rendered(node)
        if text is None:
            continue
        text = text.strip()
        if "\n" not in text and text.startswith(tuple(INFERENCE_LINES)):
            out.append((text, getattr(node, "lineno", 1)))
    return out


def _log_line_problems(lines: list[tuple[str, int]]) -> tuple[list[str], int | None]:
    """What keeps ``lines`` (from :func:`_printed_lines`) from the hackathon's layout, and
    the line of the first offending string (``None`` when no tag is printed at all)."""
    problems: list[str] = []
    first_bad: int | None = None
    for tag, (layout, pattern) in INFERENCE_LINES.items():
        mine = [(text, line) for text, line in lines if text.startswith(tag)]
        if not mine:
            problems.append(f"no `{tag}` line is printed (expected `{layout}`)")
            continue
        matched = [(m, line) for text, line in mine if (m := pattern.fullmatch(text))]
        if not matched:
            problems.append(f"its `{tag}` line reads `{mine[0][0]}`, expected `{layout}`")
            first_bad = first_bad or mine[0][1]
            continue
        if tag == "[STEP]" and not any(_two_decimals(m.group(1)) for m, _ in matched):
            problems.append(
                f"its `[STEP]` reward is `{matched[0][0].group(1)}`; the contract prints it "
                "with two decimals (`{reward:.2f}`)"
            )
            first_bad = first_bad or matched[0][1]
    return problems, first_bad


def _two_decimals(value: str) -> bool:
    """Whether a rendered reward prints two decimals: ``{:.2f}``, ``%.2f``, a two-decimal
    literal, or a value formatted elsewhere (a plain ``{}`` or ``%s``)."""
    if value in ("{}", "%s", "{:.2f}", "%.2f"):
        return True
    return re.fullmatch(r"-?\d+\.\d\d", value) is not None


# -- concurrency -------------------------------------------------------------------------------
def _concurrent_flag(cls: ast.ClassDef) -> tuple[bool | None, int]:
    """(value of SUPPORTS_CONCURRENT_SESSIONS if set in the body, its line)."""
    for node in cls.body:
        target = value = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if (
            isinstance(target, ast.Name)
            and target.id == "SUPPORTS_CONCURRENT_SESSIONS"
            and isinstance(value, ast.Constant)
        ):
            return bool(value.value), node.lineno
    return None, cls.lineno


def _concurrency(ctx: StaticContext) -> Iterator[Finding]:
    app_module = ctx.app.partition(":")[0]
    app_rel = ctx.module_file(app_module) or (
        "server/app.py" if ctx.exists("server/app.py") else None
    )
    tree = ctx.python(app_rel) if app_rel else None
    call = create_app_call(tree) if tree is not None else None
    files = ctx.python_files()
    classes: dict[str, tuple[str, ast.ClassDef]] = {}
    for rel in files:
        t = ctx.python(rel)
        if t is not None:
            for n in ast.walk(t):
                if isinstance(n, ast.ClassDef):
                    classes.setdefault(n.name, (rel, n))
    if call is None:
        ctx.skip(("EK211", "EK213"), "no `create_app(...)` call found")
    else:
        capacity, node, given = call_capacity(call, tree)
        where = Location(app_rel, node.lineno, node.col_offset + 1)
        if capacity == 1:
            how = "is 1" if given else "is not set (OpenEnv's default is 1)"
            yield CAPACITY_ONE.finding(
                f"`create_app(max_concurrent_envs=...)` should be at least the trainer's "
                f"generation batch size; it {how}. A second concurrent session gets "
                "CAPACITY_REACHED.",
                location=where,
            )
        elif capacity is not None and capacity > 1 and call.args:
            first = call.args[0]
            env_name = first.id if isinstance(first, ast.Name) else None
            found = classes.get(env_name) if env_name else None
            if found is not None:
                flag = _inherited_flag(found[1], classes)
                if flag is False:
                    yield CONCURRENCY_UNDECLARED.finding(
                        f"`{env_name}` must set `SUPPORTS_CONCURRENT_SESSIONS = True` when "
                        f"`max_concurrent_envs={capacity}`; it does not, so OpenEnv "
                        "refuses to start the server.",
                        location=Location(found[0], found[1].lineno, found[1].col_offset + 1),
                    )
    for rel in files:
        t = ctx.python(rel)
        if t is None:
            continue
        for cls in (n for n in t.body if isinstance(n, ast.ClassDef)):
            flag, _line = _concurrent_flag(cls)
            if flag:
                yield from _shared_state(rel, t, cls)


def _inherited_flag(
    cls: ast.ClassDef, classes: dict[str, tuple[str, ast.ClassDef]], depth: int = 0
) -> bool | None:
    """True/False when known from the class or its local bases; None when a base is foreign
    (other than openenv's `Environment`, whose default is False)."""
    flag, _ = _concurrent_flag(cls)
    if flag is not None:
        return flag
    for base in _base_names(cls):
        if base == "Environment":
            continue
        if base in classes and depth < 5:
            inherited = _inherited_flag(classes[base][1], classes, depth + 1)
            if inherited is not None:
                return inherited
        else:
            return None
    return False


def _is_mutable(node: ast.expr) -> bool:
    if isinstance(node, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    if isinstance(node, ast.Call):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        return name in _MUTABLE_CTORS
    return False


def _mutated_roots(func: ast.AST) -> Iterator[tuple[ast.expr, ast.AST]]:
    """(container expression, node) for every in-place mutation inside ``func``."""
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
        ):
            yield node.func.value, node
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript):
                    yield t.value, node
                elif isinstance(node, ast.AugAssign) and isinstance(t, ast.Attribute):
                    yield t, node


def _done_once(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Globals ``func`` rebinds only to do something once per process (
    textarena_env's ``_ensure_nltk_data``): a top-level ``if`` testing the name, whose body
    returns or raises, comes before the first statement assigning it. A cache of a lazy
    import or a download flag is the same for every session, not an episode's state."""
    guarded: set[str] = set()
    assigned: set[str] = set()
    counted: set[str] = set()  # `x += 1` is a counter, never a do-once flag
    for stmt in func.body:
        if (
            isinstance(stmt, ast.If)
            and stmt.body
            and isinstance(stmt.body[-1], (ast.Return, ast.Raise))
        ):
            tested = _flag_tested(stmt.test)
            if tested is not None and tested not in assigned:
                guarded.add(tested)
        for node in ast.walk(stmt):
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                counted.add(node.target.id)
            targets: list[ast.expr] = []
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            assigned |= {t.id for t in targets if isinstance(t, ast.Name)}
    return guarded - counted


def _memo_containers(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Module-level dicts ``func`` uses as a memo ("module-level caches
    mistaken for shared episode state"): it tests ``key in NAME`` / ``key not in NAME`` and
    only ever stores ``NAME[key] = value`` into it (no ``append``, ``pop``, ``+=``, ``del``).
    A cache keyed by its input gives every session the same value."""
    tested = {
        c.id
        for n in ast.walk(func)
        if isinstance(n, ast.Compare)
        and len(n.ops) == 1
        and isinstance(n.ops[0], (ast.In, ast.NotIn))
        for c in n.comparators
        if isinstance(c, ast.Name)
    }
    other = set()
    for root, node in _mutated_roots(func):
        if not isinstance(root, ast.Name):
            continue
        stored = isinstance(node, ast.Assign) and all(
            isinstance(t, ast.Subscript) for t in node.targets
        )
        if not stored:
            other.add(root.id)
    return tested - other


def _flag_tested(test: ast.expr) -> str | None:
    """The name ``test`` checks as a set/unset flag: ``x``, ``not x``, ``x is None``,
    ``x is not None``; ``None`` for any other test (``x > 100`` is a limit, not a flag)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Name):
        return test.id
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return test.left.id
    return None


def _shared_state(rel: str, tree: ast.Module, cls: ast.ClassDef) -> Iterator[Finding]:
    module_mutable = {name for name, v in module_assigns(tree).items() if _is_mutable(v)}
    class_mutable = {
        name
        for name, v in module_assigns(ast.Module(body=cls.body, type_ignores=[])).items()
        if _is_mutable(v)
    }
    instance_assigned = {
        t.attr
        for n in ast.walk(cls)
        if isinstance(n, (ast.Assign, ast.AnnAssign))
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    }
    reported: set[str] = set()
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for func in funcs:
        once = _done_once(func)
        for node in ast.walk(func):
            if isinstance(node, ast.Global):
                for name in node.names:
                    if name not in reported and name not in once:
                        reported.add(name)
                        yield MODULE_STATE.finding(
                            f"`{cls.name}` declares `SUPPORTS_CONCURRENT_SESSIONS = True`, so "
                            f"sessions must not share state; `{func.name}()` rebinds the "
                            f"module-level `{name}` (`global {name}`), which every session "
                            "shares.",
                            location=Location(rel, node.lineno, node.col_offset + 1),
                        )
        memo = _memo_containers(func)
        for root, node in _mutated_roots(func):
            name = None
            if isinstance(root, ast.Name) and root.id in memo:
                continue
            if isinstance(root, ast.Name) and root.id in module_mutable:
                name, kind = root.id, "module-level"
            elif (
                isinstance(root, ast.Attribute)
                and isinstance(root.value, ast.Name)
                and root.attr in class_mutable
                and (
                    root.value.id in ("cls", cls.name)
                    or (root.value.id == "self" and root.attr not in instance_assigned)
                )
            ):
                name, kind = root.attr, "class-level"
            if name and name not in reported:
                reported.add(name)
                yield MODULE_STATE.finding(
                    f"`{cls.name}` declares `SUPPORTS_CONCURRENT_SESSIONS = True`, so sessions "
                    f"must not share state; `{func.name}()` mutates the {kind} container "
                    f"`{name}`, which every session shares.",
                    location=Location(rel, node.lineno, node.col_offset + 1),
                )
