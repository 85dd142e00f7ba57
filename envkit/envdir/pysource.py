"""Parsing Python source into syntax trees, safely from several threads.

CPython 3.11 before 3.11.8 (and 3.12.0) keeps the AST constructor's recursion depth in
interpreter-wide state, so two threads building syntax trees at once can fail with
``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905). envkit's
own parsing goes through :func:`parse_python`, which holds one process-wide lock: a library
user calling envkit from several threads (``init_project`` in a pool, two ``validate`` runs)
never sees that error from envkit.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_AST_LOCK = threading.Lock()
_RETRIES = 3  # parses of one source when another thread's tree broke the depth count


def parse_python(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)`` under the process-wide lock.

    Raises:
        SyntaxError: ``source`` is not valid Python, or holds a null byte (ValueError on
            older Pythons).
    """
    return _parse(source, filename, "exec")


def _parse(source: str | bytes, filename: str, mode: str) -> Any:
    """``ast.parse`` under the lock, tried again when another thread's tree (a library's:
    Python 3.11's traceback formatting parses source lines) broke the shared depth count."""
    for attempt in range(_RETRIES):
        try:
            with _AST_LOCK:
                return ast.parse(source, filename=filename, mode=mode)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc) or attempt == _RETRIES - 1:
                raise
    raise AssertionError("unreachable")


def literal_value(text: str) -> object:
    """``ast.literal_eval(text)`` with the parse under the process-wide lock (``literal_eval``
    of a string parses it, which is the racy part).

    Raises:
        SyntaxError: ``text`` is not a Python expression, or holds a null byte (ValueError on
            older Pythons).
        ValueError: the expression is not a literal (a name, a call).
        TypeError, MemoryError, RecursionError: as ``ast.literal_eval`` does.
    """
    return ast.literal_eval(_parse(text.lstrip(" \t"), "<unknown>", "eval"))
