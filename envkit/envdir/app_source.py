"""Facts read from an environment's app module without importing it.

The app module (``server/app.py`` for OpenEnv's default ``server.app:app``) passes its
capacity to OpenEnv's ``create_app(env, action, observation, max_concurrent_envs=N)``;
OpenEnv's default is 1 (``openenv.core.env_server.http_server.create_app``). The templates
read it as ``int(os.environ.get("MAX_CONCURRENT_ENVS", "16"))``, so the value folded here is
the default a replica runs with when ``MAX_CONCURRENT_ENVS`` is unset.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from envkit.envdir.pysource import parse_python

#: OpenEnv's ``create_app`` default for ``max_concurrent_envs``.
OPENENV_DEFAULT_CAPACITY = 1


def module_assigns(tree: ast.Module) -> dict[str, ast.expr]:
    """Top-level ``NAME = value`` (and annotated) assignments of ``tree``; the last wins."""
    out: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.value is not None:
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node.value
        elif (
            isinstance(node, ast.AnnAssign)
            and node.value is not None
            and isinstance(node.target, ast.Name)
        ):
            out[node.target.id] = node.value
    return out


def resolve_int(node: ast.expr | None, assigns: dict[str, ast.expr], depth: int = 0) -> int | None:
    """Best-effort constant folding: literals, names, `int(...)`, `os.environ.get(k, d)`,
    `os.getenv(k, d)`. ``None`` when unknown."""
    if node is None or depth > 5:
        return None
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return None
        if isinstance(node.value, int):
            return node.value
        if isinstance(node.value, str) and node.value.strip().lstrip("-").isdigit():
            return int(node.value)
        return None
    if isinstance(node, ast.Name):
        return resolve_int(assigns.get(node.id), assigns, depth + 1)
    if isinstance(node, ast.Call):
        func = node.func
        fname = (
            func.id
            if isinstance(func, ast.Name)
            else func.attr
            if isinstance(func, ast.Attribute)
            else ""
        )
        if fname == "int" and node.args:
            return resolve_int(node.args[0], assigns, depth + 1)
        if fname in ("get", "getenv") and len(node.args) >= 2:
            return resolve_int(node.args[1], assigns, depth + 1)
    return None


def create_app_call(tree: ast.Module) -> ast.Call | None:
    """The first ``create_app(...)`` call (bare or as an attribute) in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name == "create_app":
                return node
    return None


def call_capacity(call: ast.Call, tree: ast.Module) -> tuple[int | None, ast.AST, bool]:
    """``max_concurrent_envs`` of a ``create_app(...)`` call in ``tree``.

    Read from the ``max_concurrent_envs=`` keyword, or from ``concurrency_config=
    ConcurrencyConfig(max_concurrent_envs=..., session_timeout=...)`` (inline or bound to a
    module-level name), OpenEnv 0.10's two ways (``openenv.core.env_server.http_server``).

    Returns:
        ``(value, node, given)``: the value (OpenEnv's default 1 when neither is given;
        ``None`` when it cannot be folded), the node to locate it by, and whether it was
        given at all.
    """
    assigns = module_assigns(tree)
    for kw in call.keywords:
        if kw.arg == "max_concurrent_envs":
            return resolve_int(kw.value, assigns), kw.value, True
        if kw.arg == "concurrency_config":
            config = kw.value
            if isinstance(config, ast.Name):
                config = assigns.get(config.id, config)
            if not isinstance(config, ast.Call):
                return None, kw.value, True
            inner = next((k for k in config.keywords if k.arg == "max_concurrent_envs"), None)
            if inner is None:  # ConcurrencyConfig's own default
                return OPENENV_DEFAULT_CAPACITY, config, True
            return resolve_int(inner.value, assigns), inner.value, True
    return OPENENV_DEFAULT_CAPACITY, call, False


@dataclass(frozen=True)
class AppCapacity:
    """How many WebSocket sessions one server process accepts.

    Attributes:
        sessions: ``max_concurrent_envs`` as the app module sets it by default (>= 1), or
            ``None`` when it cannot be read without running the code.
        file: the app module, relative to the environment root (POSIX), or ``None`` when it
            was not found.
        line: the line of the ``create_app`` call or its keyword (1-based), or ``None``.
    """

    sessions: int | None
    file: str | None
    line: int | None


def app_module_file(root: Path, app: str) -> str | None:
    """The file, relative to ``root``, that defines the module of ``app`` (``module:attr``,
    or a bare dotted module).
    Tries the dotted path as given, then without its first component (a package mapped
    onto the root, e.g. ``my_env.server.app``)."""
    parts = app.partition(":")[0].split(".")
    for candidate in (parts, parts[1:]):
        if not candidate:
            continue
        base = "/".join(candidate)
        for rel in (f"{base}.py", f"{base}/__init__.py"):
            if (root / rel).is_file():
                return rel
    return None


def read_capacity(root: Path, app: str) -> AppCapacity:
    """Read ``max_concurrent_envs`` from the app module of ``app`` under ``root``.

    Returns:
        An :class:`AppCapacity`; its ``sessions`` is OpenEnv's default 1 when ``create_app``
        is called without the keyword, ``None`` when the module, the call or the value
        cannot be read statically (a syntax error is not raised: it is ``None``).
    """
    rel = app_module_file(root, app)
    if rel is None:
        return AppCapacity(None, None, None)
    try:
        tree = parse_python((root / rel).read_bytes(), filename=rel)
    except (OSError, SyntaxError, ValueError):
        return AppCapacity(None, rel, None)
    call = create_app_call(tree)
    if call is None:
        return AppCapacity(None, rel, None)
    value, node, _given = call_capacity(call, tree)
    return AppCapacity(value, rel, getattr(node, "lineno", call.lineno))
