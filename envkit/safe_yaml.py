"""Reading untrusted YAML in bounded time and memory.

ruamel.yaml keeps positions (findings point at lines) but, like every YAML reader, it expands
aliases when the data is walked: a 600-byte "billion laughs" document becomes millions of
nodes once turned into JSON, and deeply nested flow collections exhaust Python's recursion
limit. :func:`load_bounded` parses with ruamel's round-trip loader and then walks the result
once, counting every node an alias would expand to, and refuses the document when it holds more
than :data:`MAX_NODES` nodes, nests deeper than :data:`MAX_DEPTH`, or carries a string that is
not valid Unicode (a lone surrogate written as ``"\\ud800"``, which no UTF-8 writer can print).
Every failure is a :class:`YamlLimitError` with a 1-based line when known, never a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

MAX_NODES = 20_000  # scalars + collections after alias expansion; a manifest has < 100
MAX_DEPTH = 64  # nesting levels; a manifest has 3
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class YamlLimitError(ValueError):
    """The YAML cannot be used: a syntax error, a bad value (``!!int '0x'``), an alias bomb,
    too deep nesting or a lone surrogate.

    Attributes:
        message: what is wrong, without the file name.
        line: 1-based line in the parsed text, ``None`` when unknown.
        column: 1-based column, ``None`` when unknown.
    """

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        message = message.encode("utf-8", "backslashreplace").decode("utf-8")
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def _line_of(node: object) -> int | None:
    lc = getattr(node, "lc", None)
    line = getattr(lc, "line", None)
    return line + 1 if isinstance(line, int) else None


def check_tree(data: object, text: str = "") -> None:
    """Walk ``data`` once; raise :class:`YamlLimitError` past the node, depth or Unicode limits.

    The walk stops at the first limit crossed, so it costs at most :data:`MAX_NODES` steps
    whatever the aliases would expand to.
    """
    count = 0
    stack: list[tuple[object, int, int | None]] = [(data, 0, None)]
    while stack:
        node, depth, line = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise YamlLimitError(
                f"the document expands to more than {MAX_NODES} values (aliases included); "
                "an alias bomb or a data dump does not belong in this file",
                line,
            )
        if depth > MAX_DEPTH:
            raise YamlLimitError(f"values are nested more than {MAX_DEPTH} levels deep", line)
        if isinstance(node, str):
            if _SURROGATE.search(node):
                m = _SURROGATE_ESCAPE.search(text)
                at = text.count("\n", 0, m.start()) + 1 if m else line
                raise YamlLimitError(
                    "a string holds a lone surrogate (e.g. `\\ud800`), which is not valid "
                    "Unicode text and cannot be printed",
                    at,
                )
        elif isinstance(node, Mapping):  # a dict, and ruamel's CommentedKeyMap (complex keys)
            here = _line_of(node) or line
            for key, value in node.items():
                stack.append((key, depth + 1, here))
                stack.append((value, depth + 1, here))
        elif isinstance(node, (list, tuple, AbstractSet)):  # ruamel's !!set is no `set`
            here = _line_of(node) or line
            stack.extend((item, depth + 1, here) for item in node)


_QUOTED = re.compile(r"'(?:[^'\n]|'')*'|\"(?:[^\"\\\n]|\\.)*\"|#[^\n]*")


def _flow_depth_line(text: str) -> int | None:
    """1-based line where ``[``/``{`` nesting first exceeds :data:`MAX_DEPTH` (quoted strings
    and comments ignored), else ``None``. ruamel needs seconds and then the recursion limit on
    thousands of levels, so they are refused before parsing."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    bare = _QUOTED.sub(lambda m: "\n" * m.group().count("\n"), text)
    depth = 0
    for match in re.finditer(r"[\[\]{}]", bare):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_DEPTH:
            return bare.count("\n", 0, match.start()) + 1
        depth = max(depth, 0)
    return None


def load_bounded(text: str) -> object:
    """Parse ``text`` with ruamel.yaml's round-trip loader (positions kept) within the limits
    of this module.

    Raises:
        YamlLimitError: not YAML, a value the loader cannot build (``!!int '0x'``, an integer
            of more than 4300 digits), nesting beyond Python's recursion limit, or a limit of
            :func:`check_tree`.
    """
    deep = _flow_depth_line(text)
    if deep is not None:
        raise YamlLimitError(f"values are nested more than {MAX_DEPTH} levels deep", deep)
    try:
        data = YAML(typ="rt").load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        raise YamlLimitError(
            problem, (mark.line + 1) if mark else None, (mark.column + 1) if mark else None
        ) from None
    except YAMLError as exc:
        raise YamlLimitError(str(exc).strip() or "invalid YAML") from None
    except RecursionError:
        raise YamlLimitError(f"values are nested more than {MAX_DEPTH} levels deep") from None
    except (ValueError, TypeError, IndexError, KeyError, AttributeError, OverflowError) as exc:
        # ruamel's constructors raise plain exceptions on some tagged values (`!!int '0x'`)
        raise YamlLimitError(
            f"a value cannot be read ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    check_tree(data, text)
    return data
