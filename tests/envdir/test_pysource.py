"""Every syntax tree envkit builds goes through envkit.envdir.pysource's lock: CPython 3.11
before 3.11.8 fails with ``SystemError: AST constructor recursion depth mismatch`` when two
threads build trees at once (python/cpython#106905), which validate runs on several threads
did (a corpus run: the reset-options reader beside another case's)."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

from envkit.envdir.pysource import literal_value, parse_python
from tests.helpers import ENVKIT_PACKAGE, envkit_sources

PKG = ENVKIT_PACKAGE
# Programs run in another interpreter, one thread: the lock is not theirs to take.
OUTSIDE = ("programs/", "envdir/pysource.py")
RACY = {("ast", "parse"), ("ast", "literal_eval"), (None, "compile")}


def _racy_calls(path: Path, tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        key = (
            (f.value.id, f.attr)
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
            else (None, f.id)
            if isinstance(f, ast.Name)
            else None
        )
        if key in RACY:
            found.append(f"{path.relative_to(PKG)}:{node.lineno} {'.'.join(filter(None, key))}")
    return found


def test_no_module_builds_syntax_trees_outside_the_lock() -> None:
    racy = [
        hit
        for path, _text, tree in envkit_sources()
        if not path.relative_to(PKG).as_posix().startswith(OUTSIDE)
        for hit in _racy_calls(path, tree)
    ]
    assert racy == [], "use envkit.envdir.pysource (parse_python / literal_value): " + str(racy)


def test_literal_value_reads_literals_and_refuses_the_rest() -> None:
    assert literal_value(" [1, 'a', {'k': 2.5}]") == [1, "a", {"k": 2.5}]
    for bad, error in (("len(x)", ValueError), ("1 +", SyntaxError), ("a\0", SyntaxError)):
        with pytest.raises((error, ValueError)):  # a null byte: ValueError on older Pythons
            literal_value(bad)


def test_threads_parsing_at_once_all_succeed() -> None:
    source = "def f(x):\n" + "".join(f"    y{i} = [[{i}]] * x\n" for i in range(300))
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                parse_python(source)
                literal_value("[[[1, 2], [3]], {'a': (4,)}]")
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
