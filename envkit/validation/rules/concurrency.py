"""EK2xx concurrency rules: the capacity `create_app` grants and the state concurrent sessions
share.

Facts (docs/rules.md): `create_app(..., max_concurrent_envs=N)` defaults to 1 and N > 1 needs
`SUPPORTS_CONCURRENT_SESSIONS = True`. TRL needs capacity >= its generation batch size.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from envkit.envdir.app_source import call_capacity, create_app_call, module_assigns
from envkit.findings import Finding, Location, Severity, register
from envkit.validation.context import StaticContext
from envkit.validation.rules.layout import base_names

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
    yield from _concurrency(ctx)


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
        ctx.skip(
            (CAPACITY_ONE.code, CONCURRENCY_UNDECLARED.code), "no `create_app(...)` call found"
        )
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
    for base in base_names(cls):
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
