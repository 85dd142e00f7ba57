"""Code shape: no function body in ``envkit/`` is longer than 100 lines, and no `assert`.

A body is measured from its first statement after the docstring to its last line, so a typer
command's option declarations (its signature) and its help text (its docstring) do not count;
everything it does does. Exceptions are listed with their reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ENVKIT_PACKAGE, envkit_sources

PACKAGE = ENVKIT_PACKAGE
LIMIT = 100

#: "path::function" -> why it may be longer.
EXCEPTIONS: dict[str, str] = {
    "envkit/label/web.py::create_app": "a FastAPI route factory: the routes close over one store",
}


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = node.body
    if (
        len(body) > 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return (node.end_lineno or node.lineno) - body[0].lineno + 1


def long_functions(root: Path = PACKAGE, limit: int = LIMIT) -> dict[str, int]:
    """``"path::name" -> body lines`` for every function whose body exceeds ``limit``."""
    out = {}
    if root == PACKAGE:
        trees = [(path, tree) for path, _text, tree in envkit_sources()]
    else:
        trees = [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(root.rglob("*.py"))]
    for path, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = _body_lines(node)
                if lines > limit:
                    out[f"{path.relative_to(root.parent)}::{node.name}"] = lines
    return out


def test_no_function_body_is_longer_than_the_limit() -> None:
    too_long = {k: v for k, v in long_functions().items() if k not in EXCEPTIONS}
    assert too_long == {}, "split these into named steps:\n" + "\n".join(
        f"{k}: {v} lines" for k, v in sorted(too_long.items(), key=lambda kv: -kv[1])
    )


def test_exceptions_are_still_needed() -> None:
    stale = set(EXCEPTIONS) - set(long_functions())
    assert stale == set(), f"no longer over {LIMIT} lines, drop from EXCEPTIONS: {stale}"


def test_the_measure_counts_the_body(tmp_path: Path) -> None:
    pkg = tmp_path / "envkit"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(101))
    (pkg / "m.py").write_text(f'def long(\n    a,\n    b,\n):\n    """Doc."""\n{body}\n')
    (pkg / "n.py").write_text('def short():\n    """Doc."""\n' + "    pass\n" * 100)
    assert long_functions(pkg) == {"envkit/m.py::long": 101}


def test_library_code_has_no_assert() -> None:
    """``python -O`` strips asserts: control flow in envkit/ raises real errors instead."""
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
        for path, _text, tree in envkit_sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.Assert)
    ]
    assert found == [], "replace with an explicit check:\n" + "\n".join(found)
