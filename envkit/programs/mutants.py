"""Mutants of an oracle's program that answer differently from it (run as ``python -I FILE``).

Runs in the ENVIRONMENT's interpreter, which may not have envkit: standard library only.
Reads one JSON object on stdin:

* ``source``: the oracle's Python source; ``func``: the function the task asks for;
* ``values``: literal inputs to try (numbers and strings the task shows), besides this
  program's own pool;
* ``max``: mutants to print at most; ``call_timeout_s``: seconds one call may take.

Each mutant changes one thing in the source's functions: a condition of ``and``/``or``
dropped (replaced by ``True``/``False``), a comparison's operator moved to its neighbour
(``<`` and ``<=``, ``==`` and ``!=``), an integer constant plus one. A mutant is printed
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

POOL_INTS = (-3, -1, 0, 1, 2, 3, 4, 5, 7, 9, 10, 12, 15, 16, 25, 49, 97, 100, 400, 1000)
POOL_INTS += (1900, 2000, 2023, 2024, 2100, 1_000_003)
POOL_FLOATS = (0.0, 0.5, -1.5, 2.25, 10.0)
POOL_TEXTS = ("", "a", "ab", "abc", "aba", "Hello World", "racecar", "a b  c", "AbC", "x1y2")
POOL_LISTS = ([], [1], [1, 2], [2, 1], [3, 1, 2], [1, 1, 2], [-1, 0, 5], [5, 4, 3, 2, 1])
MAX_CALLS = 400  # inputs tried per function
FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
FLIP.update({ast.Eq: ast.NotEq, ast.NotEq: ast.Eq})


class _Timeout(BaseException):
    """A call ran past ``call_timeout_s`` (a BaseException: the program's ``except
    Exception`` must not swallow it)."""


def _alarm(_signum: int, _frame: object) -> None:
    raise _Timeout


def _points(tree: ast.Module) -> list[tuple[ast.AST, str, int]]:
    """Every place a mutation applies, in source order: ``(node, kind, index)``."""
    out: list[tuple[ast.AST, str, int]] = []
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        for node in ast.walk(fn):
            if isinstance(node, ast.BoolOp):
                out += [(node, "operand", i) for i in range(len(node.values))]
            elif isinstance(node, ast.Compare):
                out += [(node, "compare", i) for i, op in enumerate(node.ops) if type(op) in FLIP]
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, int)
                and not isinstance(node.value, bool)
            ):
                out.append((node, "constant", 0))
    out.sort(key=lambda p: (getattr(p[0], "lineno", 0), getattr(p[0], "col_offset", 0), p[2]))
    return out


def _mutate(source: str, k: int) -> tuple[str, str] | None:
    """The source with its ``k``-th mutation point changed, and what changed; None past the
    last point."""
    tree = ast.parse(source)
    points = _points(tree)
    if k >= len(points):
        return None
    node, kind, i = points[k]
    line = getattr(node, "lineno", 0)
    if isinstance(node, ast.BoolOp) and kind == "operand":
        kept = isinstance(node.op, ast.And)  # the operand that changes nothing by itself
        before = ast.unparse(node.values[i])
        node.values[i] = ast.Constant(kept)
        change = f"line {line}: `{before}` replaced by `{kept}`"
    elif isinstance(node, ast.Compare):
        before = ast.unparse(node)
        node.ops[i] = FLIP[type(node.ops[i])]()
        change = f"line {line}: `{before}` became `{ast.unparse(node)}`"
    elif isinstance(node, ast.Constant) and isinstance(node.value, int):
        change = f"line {line}: the constant {node.value} became {node.value + 1}"
        node.value += 1
    else:
        return None
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n", change


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
    found: list[dict[str, str]] = []
    for k in itertools.count():
        if len(found) >= int(job.get("max", 12)):
            break
        mutated = _mutate(source, k)
        if mutated is None:
            break
        text, change = mutated
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
            found.append({"source": text, "change": change, **witness})
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
