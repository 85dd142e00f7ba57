"""The ``reset`` options an environment declares in its source.

Read statically from ``server/*.py`` (nothing is imported or run): the keyword parameters of
every ``reset``/``reset_async`` method besides ``seed`` and ``episode_id``, each with the
values it declares. The schema digest and EK520 (declared reset options that change nothing)
both ask this one reader.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from envkit.envdir.pysource import parse_python
from envkit.fsutil import read_text_bounded

MAX_SOURCE_FILES = 40  # server/*.py files read for reset signatures


# -- EK520: declared reset options that change nothing ------------------------------------------
def _literal_values(node: ast.expr | None) -> list[Any]:
    """The values of a ``Literal[...]`` annotation (also inside ``Optional[...]``), ``[False,
    True]`` for ``bool``; ``[]`` otherwise."""
    if node is None:
        return []
    if isinstance(node, ast.Name) and node.id == "bool":
        return [False, True]
    if isinstance(node, ast.Subscript):
        name = (
            node.value.id if isinstance(node.value, ast.Name) else getattr(node.value, "attr", "")
        )
        inner = node.slice
        items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        if name == "Literal":
            return [i.value for i in items if isinstance(i, ast.Constant)]
        if name in ("Optional", "Union"):
            return [v for i in items for v in _literal_values(i)]
    return []


def _doc_values(doc: str, name: str) -> list[Any]:
    """Quoted values on the docstring line that documents ``name`` (``name: 'easy' or
    'hard'``, Google style)."""
    for line in doc.splitlines():
        m = re.match(rf"\s*{re.escape(name)}\s*(?:\([^)]*\))?\s*:(.*)", line)
        if m:
            return list(dict.fromkeys(re.findall(r"['\"`]([^'\"`\s]{1,40})['\"`]", m.group(1))))
    return []


def reset_options(source: str) -> dict[str, list[Any]]:
    """Keyword parameters of every ``reset`` method in ``source`` besides ``seed`` and
    ``episode_id``, each with the values it declares (a ``Literal`` annotation, ``bool``,
    quoted values on its docstring line, its default); an unparsable source declares none."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return {}
    out: dict[str, list[Any]] = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or fn.name not in (
            "reset",
            "reset_async",
        ):
            continue
        args = fn.args
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = list(zip(positional, defaults, strict=True))
        pairs += list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
        doc = ast.get_docstring(fn) or ""
        for arg, default in pairs:
            if arg.arg in ("self", "seed", "episode_id"):
                continue
            values = _literal_values(arg.annotation) + _doc_values(doc, arg.arg)
            if isinstance(default, ast.Constant) and default.value is not None:
                values.append(default.value)
            kept = out.setdefault(arg.arg, [])
            for v in values:
                if v not in kept:
                    kept.append(v)
    return out


def source_reset_options(root: Path) -> dict[str, list[Any]]:
    """The reset options the environment at ``root`` declares in its source: keyword
    parameters of the ``reset`` methods in ``server/*.py`` (:func:`reset_options`), each
    with its declared values in first-seen order. A file that cannot be read as bounded
    UTF-8 text declares nothing."""

    out: dict[str, list[Any]] = {}
    for path in sorted((root / "server").glob("*.py"))[:MAX_SOURCE_FILES]:
        try:
            text = read_text_bounded(path, root=root)
        except (OSError, ValueError):
            continue
        if "def reset" not in text:
            continue
        for name, values in reset_options(text).items():
            kept = out.setdefault(name, [])
            kept += [v for v in values if v not in kept]
    return out
