"""The ``reset`` options an environment declares in its source.

Read statically from ``server/*.py`` (nothing is imported or run): the keyword parameters of
every ``reset``/``reset_async`` method besides ``seed`` and ``episode_id``, each with the
values it declares. The schema digest and EK520 (declared reset options that change nothing)
both ask this one reader; EK413 asks it whether ``reset`` can receive the seed at all.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
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


def _resets(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every ``reset``/``reset_async`` function defined in ``tree``, at any depth."""
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and fn.name in (
            "reset",
            "reset_async",
        ):
            yield fn


def reset_options(source: str) -> dict[str, list[Any]]:
    """Keyword parameters of every ``reset`` method in ``source`` besides ``seed`` and
    ``episode_id``, each with the values it declares (a ``Literal`` annotation, ``bool``,
    quoted values on its docstring line, its default); an unparsable source declares none."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return {}
    out: dict[str, list[Any]] = {}
    for fn in _resets(tree):
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


def takes_seed(source: str) -> bool | None:
    """Whether the ``reset`` methods of ``source`` can receive the seed: ``True`` when one of
    them declares a ``seed`` parameter or ``**kwargs`` (OpenEnv passes ``seed`` only to a
    ``reset`` that accepts it and silently drops it otherwise), ``False`` when ``source``
    defines ``reset`` methods and none does, ``None`` when it defines none or cannot be
    parsed."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return None
    found = None
    for fn in _resets(tree):
        args = fn.args
        names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        if "seed" in names or args.kwarg is not None:
            return True
        found = False
    return found


def source_takes_seed(root: Path) -> bool | None:
    """:func:`takes_seed` over ``server/*.py`` of the environment at ``root``: ``False`` only
    when those files define ``reset`` methods and none can receive the seed; ``None`` when
    they define none (the environment's ``reset`` is elsewhere: nothing to tell)."""
    verdicts = [
        takes_seed(text)
        for path in sorted((root / "server").glob("*.py"))[:MAX_SOURCE_FILES]
        for text in _read(path, root)
        if "def reset" in text
    ]
    if True in verdicts:
        return True
    return False if False in verdicts else None


def server_modules(root: Path) -> list[str]:
    """The ``server/*.py`` files of the environment at ``root`` that declare its ``reset``,
    relative to ``root``, sorted; at most :data:`MAX_SOURCE_FILES`."""
    paths = sorted((root / "server").glob("*.py"))[:MAX_SOURCE_FILES]
    return [path.relative_to(root).as_posix() for path in paths]


def declared_reset_options(texts: Iterable[str]) -> dict[str, list[Any]]:
    """The keyword parameters of the ``reset`` methods in the Python sources ``texts``
    (:func:`reset_options`), each with its declared values in first-seen order."""
    out: dict[str, list[Any]] = {}
    for text in texts:
        if "def reset" not in text:
            continue
        for name, values in reset_options(text).items():
            kept = out.setdefault(name, [])
            kept += [v for v in values if v not in kept]
    return out


# -- every option the environment documents (EK520) ------------------------------------------
#: A value in documentation: a quoted string, a bool, an integer (not part of a range like 1-10).
_TOKEN = re.compile(
    r"""(["'`])([^"'`\s]{1,40})\1|(True|False|true|false)\b|(-?\d{1,9})(?![\w.-])"""
)
#: What may separate two values: a parenthesised remark, then ``|``, ``,``, ``or``, ``..``, ``/``.
_SEP = re.compile(r"\s*(?:\([^()\n]{0,60}\))?\s*(?:\||,|\bor\b|\.\.|/)?\s*")
_MENTION = re.compile(r"\breset(?:_async)?\(([^()\n]{0,300})\)")
_PARAM = re.compile(r"(?<![\w.])([a-z_][a-z0-9_]*)\s*=\s*")
_KEY = re.compile(r"""["']([A-Za-z_][\w-]{0,40})["']\s*:\s*""")
_DOC_ENTRY = re.compile(r"^\s*`?([a-z_][a-z0-9_]*)`?\s*(?:\([^)]*\))?\s*:\s*\S", re.MULTILINE)
_NOT_OPTIONS = {
    "self",
    "seed",
    "episode_id",
    "args",
    "returns",
    "raises",
    "yields",
    "note",
    "kwargs",
}
MAX_TEXT_CHARS = 200_000  # README read for documented reset options


def merge(kept: list[Any], values: list[Any]) -> list[Any]:
    """Append to ``kept`` each of ``values`` it does not hold yet, compared with their type
    (``1`` and ``True`` are two values); returns ``kept``."""
    for v in values:
        if not any(type(k) is type(v) and k == v for k in kept):
            kept.append(v)
    return kept


def _token_value(m: re.Match[str]) -> str | bool | int:
    if m.group(2) is not None:
        return m.group(2)
    if m.group(3) is not None:
        return m.group(3).lower() == "true"
    return int(m.group(4))


def _chain(text: str, at: int) -> list[Any]:
    """The values listed in ``text`` from ``at`` on: tokens joined by separators
    (``"easy"|"hard"``, ``'a', 'b' or 'c'``, ``"w0".."w7"``, ``True|False``)."""
    out: list[Any] = []
    while True:
        m = _TOKEN.match(text, at)
        if m is None:
            return out
        merge(out, [_token_value(m)])
        sep = _SEP.match(text, m.end())
        at = sep.end() if sep else m.end()
        if at == m.end() and out:
            return out


def _text_values(text: str, label: str) -> list[Any]:
    """Values ``text`` lists for the option ``label`` (``name`` or ``name.key``): after
    ``name=`` or ``name:`` (backticks allowed), or after ``"key":`` for a key of a dict option."""
    name = label.rsplit(".", 1)[-1]
    if "." in label:
        pattern = rf"""["']{re.escape(name)}["']\s*:\s*"""
    else:
        pattern = rf"(?<![\w.]){re.escape(name)}`?\s*[=:]\s*"
    out: list[Any] = []
    for m in re.finditer(pattern, text):
        merge(out, _chain(text, m.end()))
    return out


def _mentions(text: str) -> dict[str, list[Any]]:
    """Options named in ``reset(...)`` mentions of ``text`` (``reset(seed, level="a"|"b")``,
    ``reset(options={"task_id": "w3"})``), each with the values written there."""
    out: dict[str, list[Any]] = {}
    for mention in _MENTION.finditer(text):
        inner = mention.group(1)
        for p in _PARAM.finditer(inner):
            name = p.group(1)
            if name in _NOT_OPTIONS:
                continue
            if inner[p.end() : p.end() + 1] == "{":  # a dict option: its keys are the options
                for k in _KEY.finditer(inner, p.end()):
                    merge(out.setdefault(f"{name}.{k.group(1)}", []), _chain(inner, k.end()))
                continue
            merge(out.setdefault(name, []), _chain(inner, p.end()))
    return out


def _names(node: ast.expr, name: str) -> bool:
    """``node`` is the name ``name``, or ``name or {}``."""
    if isinstance(node, ast.BoolOp):
        node = node.values[0]
    return isinstance(node, ast.Name) and node.id == name


def _keys_read(fn: ast.AST, name: str) -> list[str]:
    """Constant keys the function reads from the mapping ``name``: ``name.get("k")``,
    ``(name or {}).get("k")``, ``name.pop("k")``, ``name["k"]``, ``"k" in name``."""
    keys: list[str] = []
    for node in ast.walk(fn):
        key = None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop", "setdefault")
            and _names(node.func.value, name)
            and node.args
        ):
            key = node.args[0]
        elif isinstance(node, ast.Subscript) and _names(node.value, name):
            key = node.slice
        elif isinstance(node, ast.Compare) and len(node.comparators) == 1:
            key = node.left if _names(node.comparators[0], name) else None
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value not in keys:
            keys.append(key.value)
    return keys


def _is_int(node: ast.expr | None) -> bool:
    """``int`` or ``Optional[int]`` (``int | None``) annotation."""
    if isinstance(node, ast.Name):
        return node.id == "int"
    if isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == "Optional":
        return _is_int(node.slice)
    if isinstance(node, ast.BinOp):
        return _is_int(node.left) or _is_int(node.right)
    return False


def documented_options(source: str, readme: str = "") -> dict[str, list[Any]]:
    """Every ``reset`` option ``source`` (a Python module) and ``readme`` document, each with
    the values to try: the keyword parameters of ``reset``/``reset_async`` (besides ``seed``
    and ``episode_id``; a default naming a module constant is resolved), the keys their body
    reads from ``**kwargs`` (``kwargs.get("level")``) or from a dict parameter
    (``options.get("task_id")``, labelled ``options.task_id``), the entries of their
    docstring, and the options of ``reset(...)`` mentions in the module docstring, the
    docstrings and ``readme``. Values: ``Literal``/``bool`` annotations, defaults, and values
    listed in the documentation (``level="easy"|"hard"``, ``level: 'easy' or 'hard'``); an
    ``int`` option with fewer than two gets ``0`` and ``1``. An unparsable source documents
    what ``readme`` mentions."""
    try:
        tree: ast.Module | None = parse_python(source)
    except (SyntaxError, ValueError):
        tree = None
    texts = [readme]
    out: dict[str, list[Any]] = {}
    ints: set[str] = set()

    def add(label: str, values: list[Any]) -> None:
        if label.split(".", 1)[0] not in _NOT_OPTIONS:
            merge(out.setdefault(label, []), values)

    if tree is not None:
        texts.append(ast.get_docstring(tree) or "")
        constants = {
            t.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        for fn in _resets(tree):
            doc = ast.get_docstring(fn) or ""
            texts.append(doc)
            args = fn.args
            positional = args.posonlyargs + args.args
            defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
            pairs = list(zip(positional, defaults, strict=True))
            pairs += list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
            for arg, default in pairs:
                values = _literal_values(arg.annotation) + _doc_values(doc, arg.arg)
                if isinstance(default, ast.Name) and default.id in constants:
                    default = ast.Constant(constants[default.id])
                if isinstance(default, ast.Constant) and default.value is not None:
                    values.append(default.value)
                add(arg.arg, values)
                if _is_int(arg.annotation):
                    ints.add(arg.arg)
                for key in _keys_read(fn, arg.arg):
                    add(f"{arg.arg}.{key}", [])
            if args.kwarg is not None:
                for key in _keys_read(fn, args.kwarg.arg):
                    add(key, [])
                for m in _DOC_ENTRY.finditer(doc):
                    add(m.group(1), _doc_values(doc, m.group(1)))
    for text in texts:
        for label, values in _mentions(text).items():
            add(label, values)
    for label in out:
        for text in texts:
            add(label, _text_values(text, label))
    for label in ints:
        values = out.get(label, [])
        if len(values) < 2:
            merge(values, [0, 1])
    return {k: v for k, v in out.items() if "." in k or k not in _dict_params(out)}


def _dict_params(out: dict[str, list[Any]]) -> set[str]:
    """Labels that are dict parameters (their keys are labelled ``name.key``)."""
    return {k.split(".", 1)[0] for k in out if "." in k}


def documented_reset_options(root: Path) -> dict[str, list[Any]]:
    """Every ``reset`` option the environment at ``root`` documents, with the values to try
    (:func:`documented_options` over ``server/*.py`` that define ``reset`` and ``README.md``).
    Wider than :func:`declared_reset_options` (the signature only, which the schema digest
    keeps reading so that digests do not change)."""
    try:
        readme = read_text_bounded(root / "README.md", root=root)[:MAX_TEXT_CHARS]
    except (OSError, ValueError):
        readme = ""
    out: dict[str, list[Any]] = {}
    sources = [
        text
        for path in sorted((root / "server").glob("*.py"))[:MAX_SOURCE_FILES]
        for text in _read(path, root)
        if "def reset" in text
    ]
    for i, text in enumerate(sources or [""]):
        for label, values in documented_options(text, readme if i == 0 else "").items():
            merge(out.setdefault(label, []), values)
    return out


def _read(path: Path, root: Path) -> list[str]:
    try:
        return [read_text_bounded(path, root=root)]
    except (OSError, ValueError):
        return []
