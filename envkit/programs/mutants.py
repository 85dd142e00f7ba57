"""Mutants of an oracle's program that answer differently from it (run as ``python -I FILE``).

Runs in the ENVIRONMENT's interpreter, which may not have envkit: standard library only.
Reads one JSON object on stdin:

* ``source``: the oracle's Python source; ``func``: the function the task asks for;
* ``values``: literal inputs to try (numbers and strings the task shows), besides this
  program's own pool;
* ``max``: mutants to print at most; ``call_timeout_s``: seconds one call may take.

Each mutant changes one thing in the source's functions: a statement removed (an
assignment, a call, a guard without ``else``), a condition of ``and``/``or`` dropped
(replaced by ``True``/``False``), a comparison's operator moved to its neighbour (``<`` and
``<=``, ``==`` and ``!=``, ``in`` and ``not in``), a returned value reversed (``[::-1]``), an
integer constant plus one. At most :data:`MAX_POINTS` are tried; the ones printed take each
kind in turn. A mutant is printed
only when it answers some input differently from the oracle (an equivalent mutant, which
no test can tell apart, is never printed), never when a call of it raised where the oracle's
did not or ran out of time (a mutant that hangs is not sent to a grader). Prints one JSON
list: ``{"source", "change", "args", "oracle", "mutant"}`` per mutant, the last three the
first input found on which they differ (``repr`` texts). Exit status 0 also when nothing is
printed; 2 when the source does not define ``func``.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import json
import signal
import sys

POOL_INTS = (-3, -1, -12, -305, 0, 1, 2, 3, 4, 5, 7, 9, 10, 12, 15, 16, 25, 49, 97, 100, 400, 1000)
POOL_INTS += (1900, 2000, 2023, 2024, 2100, 1_000_003)
POOL_FLOATS = (0.0, 0.5, -1.5, 2.25, 10.0)
POOL_TEXTS = ("", "a", "ab", "abc", "aba", "Hello World", "racecar", "a b  c", "AbC", "x1y2")
POOL_LISTS = ([], [1], [1, 2], [2, 1], [3, 1, 2], [1, 1, 2], [-1, 0, 5], [5, 4, 3, 2, 1])
MAX_CALLS = 400  # inputs tried per function
FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
FLIP.update({ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In})
MAX_POINTS = 80  # mutation points tried


class _Timeout(BaseException):
    """A call ran past ``call_timeout_s`` (a BaseException: the program's ``except
    Exception`` must not swallow it)."""


def _alarm(_signum: int, _frame: object) -> None:
    raise _Timeout


#: Statements a mutant may remove (replaced by ``pass``): a step of the computation, or a
#: guard without ``else`` (a special case of the specification).
REMOVABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.If)
KINDS = ("statement", "operand", "compare", "return", "constant")


def _points(tree: ast.Module) -> list[tuple[ast.AST, str, int]]:
    """Every place a mutation applies, in source order: ``(node, kind, index)``."""
    out: list[tuple[ast.AST, str, int]] = []
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        for node in ast.walk(fn):
            for block in (getattr(node, f, None) for f in ("body", "orelse")):
                if isinstance(block, list) and len(block) > 1:
                    out += [
                        (stmt, "statement", 0)
                        for stmt in block
                        if isinstance(stmt, REMOVABLE)
                        and not (isinstance(stmt, ast.If) and stmt.orelse)
                        and not (
                            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                        )
                    ]
            if isinstance(node, ast.BoolOp):
                out += [(node, "operand", i) for i in range(len(node.values))]
            elif isinstance(node, ast.Compare):
                out += [(node, "compare", i) for i, op in enumerate(node.ops) if type(op) in FLIP]
            elif isinstance(node, ast.Return) and node.value is not None:
                out.append((node, "return", 0))
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, int)
                and not isinstance(node.value, bool)
            ):
                out.append((node, "constant", 0))
    out.sort(key=lambda p: (getattr(p[0], "lineno", 0), getattr(p[0], "col_offset", 0), p[2]))
    return out


class _Remove(ast.NodeTransformer):
    """Replaces one statement by ``pass``."""

    def __init__(self, target: ast.AST) -> None:
        self.target = target

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return ast.copy_location(ast.Pass(), node)
        return super().visit(node)


def _mutate(source: str, k: int) -> tuple[str, str, str] | None:
    """The source with its ``k``-th mutation point changed, what changed, and the kind of
    change; None past the last point."""
    tree = ast.parse(source)
    points = _points(tree)
    if k >= len(points):
        return None
    node, kind, i = points[k]
    line = getattr(node, "lineno", 0)
    if kind == "statement":
        change = f"line {line}: `{ast.unparse(node).splitlines()[0]}` removed"
        tree = _Remove(node).visit(tree)
    elif isinstance(node, ast.BoolOp):
        kept = isinstance(node.op, ast.And)  # the operand that changes nothing by itself
        before = ast.unparse(node.values[i])
        node.values[i] = ast.Constant(kept)
        change = f"line {line}: `{before}` replaced by `{kept}`"
    elif isinstance(node, ast.Compare):
        before = ast.unparse(node)
        node.ops[i] = FLIP[type(node.ops[i])]()
        change = f"line {line}: `{before}` became `{ast.unparse(node)}`"
    elif isinstance(node, ast.Return) and node.value is not None:
        before = ast.unparse(node.value)
        node.value = ast.Subscript(node.value, ast.Slice(None, None, ast.Constant(-1)), ast.Load())
        change = f"line {line}: `return {before}` returns it reversed"
    elif isinstance(node, ast.Constant) and isinstance(node.value, int):
        change = f"line {line}: the constant {node.value} became {node.value + 1}"
        node.value += 1
    else:
        return None
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n", change, kind


def _function(source: str, func: str) -> object:
    namespace: dict[str, object] = {"__name__": "solution"}
    exec(compile(source, "<solution>", "exec"), namespace)  # noqa: S102 - the oracle's own code
    return namespace.get(func)


def _arity(fn: object) -> int:
    try:
        params = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in params if p.kind in kinds and p.default is inspect.Parameter.empty]
    return max(1, len(required))


def _inputs(values: list[object], arity: int) -> list[tuple[object, ...]]:
    """Argument tuples of ``arity`` from the task's values and the pool, of one kind each."""
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    texts = [v for v in values if isinstance(v, str)]
    groups: list[list[object]] = [
        list(dict.fromkeys([*numbers, *POOL_INTS, *POOL_FLOATS])),
        list(dict.fromkeys([*texts, *POOL_TEXTS])),
        [list(v) for v in POOL_LISTS],
    ]
    out: list[tuple[object, ...]] = []
    for group in groups:
        head = group if arity == 1 else group[:8]
        out += [tuple(c) for c in itertools.islice(itertools.product(head, repeat=arity), 150)]
    return out[:MAX_CALLS]


def _call(fn: object, args: tuple[object, ...], timeout_s: float) -> tuple[str, str]:
    """``("ok", repr(result))``, ``("raised", name)`` or ``("timeout", "")``."""
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        return "ok", repr(fn(*[json.loads(json.dumps(a)) for a in args]))  # type: ignore[operator]
    except _Timeout:
        return "timeout", ""
    except Exception as exc:  # noqa: BLE001 - any failure of a call is its answer
        return "raised", type(exc).__name__
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def main() -> int:
    job = json.loads(sys.stdin.read())
    source, func = str(job["source"]), str(job["func"])
    timeout_s = float(job.get("call_timeout_s", 0.2))
    signal.signal(signal.SIGALRM, _alarm)
    try:
        oracle = _function(source, func)
    except Exception:  # noqa: BLE001 - an oracle that does not load has no mutants
        return 2
    if not callable(oracle):
        return 2
    answers = []
    for args in _inputs(list(job.get("values") or []), _arity(oracle)):
        status, said = _call(oracle, args, timeout_s)
        if status == "ok":
            answers.append((args, said))
    by_kind: dict[str, list[dict[str, str]]] = {kind: [] for kind in KINDS}
    for k in range(MAX_POINTS):
        mutated = _mutate(source, k)
        if mutated is None:
            break
        text, change, kind = mutated
        try:
            fn = _function(text, func)
        except Exception:  # noqa: BLE001 - a mutant that does not load is no mutant
            continue
        witness = None
        for args, said in answers:
            status, got = _call(fn, args, timeout_s)
            if status != "ok":
                witness = None  # it raises or hangs where the oracle answers: not sent
                break
            if witness is None and got != said:
                witness = {"args": repr(args), "oracle": said, "mutant": got}
        if witness is not None:
            by_kind[kind].append({"source": text, "change": change, **witness})
    # one of each kind in turn: the first mutants of a long function are not all alike
    rounds = itertools.zip_longest(*by_kind.values())
    found = [m for row in rounds for m in row if m is not None][: int(job.get("max", 12))]
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
