"""EK2xx layout rules: the files of OpenEnv's layout, the server's entry point
(`server/app.py`) and the Action/Observation models (`models.py`).

Facts (docs/rules.md): OpenEnv 0.10's deployment check
(`openenv.cli._validation.validate_multi_mode_deployment`) wants `def main(` plus an
`if __name__ == "__main__"` guard in server/app.py.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from envkit.findings import Finding, Location, Severity, register
from envkit.validation.context import StaticContext

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

REQUIRED_FILES = ("__init__.py", "models.py", "client.py", "server/__init__.py", "server/app.py")


def check(ctx: StaticContext) -> Iterator[Finding]:
    yield from _files(ctx)
    yield from _server_main(ctx)
    yield from _models(ctx)


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
                [MODELS_MISSING.code],
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
        ctx.skip([SERVER_NO_MAIN.code], "no server/app.py")
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


def base_names(cls: ast.ClassDef) -> list[str]:
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
            ctx.skip([MODELS_MISSING.code], "no models.py")
        return
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    local = {c.name: c for c in classes}

    def derives(cls: ast.ClassDef, kind: str, seen: frozenset[str] = frozenset()) -> bool:
        for name in base_names(cls):
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
