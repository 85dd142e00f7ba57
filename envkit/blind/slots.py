"""Where an answer goes in an action, and how to put another value there.

A *slot* is a string or number leaf of an action that the action schema leaves free (no
``enum``, no ``const``): the ``answer`` of ``{"answer": "Paris"}``, the ``amount`` of
``{"tool_name": "submit_answer", "arguments": {"amount": 12.5}}``; or a list of strings as a
whole (the ``words`` of ``{"words": ["level", "noon"]}``: an answer with many parts, where a
policy may send every candidate at once). The tool name, a
``Literal`` command or a choice from an ``enum`` is not a slot: the server would refuse any
other value.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

from envkit.blind.schema import resolve, types_of

Path = tuple[str | int, ...]
MAX_DEPTH = 6  # nesting searched for slots
STRIPPED = ("metadata",)  # OpenEnv's Action.metadata: never an answer


@dataclass(frozen=True)
class Slot:
    """One free leaf of an action.

    Attributes:
        path: keys (and list indices) from the action to the leaf, e.g.
            ``("arguments", "amount")``.
        kind: ``"string"``, ``"number"``, ``"integer"`` or ``"array"`` (a list of
            strings).
        value: the leaf's value in the action it was read from.
        node: the leaf's JSON Schema (``{}`` when the schema does not say).
    """

    path: Path
    kind: str
    value: object
    node: dict[str, Any]

    @property
    def where(self) -> str:
        """The dotted path, for messages (``arguments.amount``)."""
        return ".".join(str(p) for p in self.path)


def _branch(node: dict[str, Any], value: object, root: dict[str, Any]) -> dict[str, Any]:
    """The ``anyOf``/``oneOf`` branch of ``node`` that ``value`` takes: the first object
    branch whose ``const`` properties ``value`` matches (a tool call's ``tool_name``)."""
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if not isinstance(options, list):
            continue
        for option in options:
            sub = resolve(option, root)
            props = sub.get("properties")
            if not isinstance(props, dict) or not isinstance(value, dict):
                continue
            consts = {k: resolve(v, root).get("const") for k, v in props.items()}
            if all(value.get(k) == c for k, c in consts.items() if c is not None):
                return sub
        typed = [resolve(o, root) for o in options]
        return next((o for o in typed if types_of(o) and types_of(o) != ["null"]), {})
    return node


def _kind(value: object) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def find(action: dict[str, Any], schema: dict[str, Any] | None) -> list[Slot]:
    """The slots of ``action`` under ``schema`` (the action JSON Schema; ``None``: none
    known, every string and number leaf is a slot).

    Returns:
        Slots in the action's key order, depth first; text (strings and lists of strings)
        first when both kinds occur (an answer is more often text than a count).
    """
    root = schema or {}
    out: list[Slot] = []

    def walk(value: object, node: dict[str, Any], path: Path, depth: int) -> None:
        node = _branch(resolve(node, root), value, root)
        if depth > MAX_DEPTH:
            return
        if isinstance(value, dict):
            props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
            for key, sub in value.items():
                if depth == 0 and key in STRIPPED:
                    continue
                walk(sub, props.get(key, {}), (*path, key), depth + 1)
            return
        if isinstance(value, list):
            if value and all(isinstance(v, str) for v in value) and "const" not in node:
                out.append(Slot(path, "array", value, node))
                return
            items = node.get("items") if isinstance(node.get("items"), dict) else {}
            for i, sub in enumerate(value[:4]):
                walk(sub, items, (*path, i), depth + 1)
            return
        kind = _kind(value)
        if kind is None or "const" in node or isinstance(node.get("enum"), list):
            return
        out.append(Slot(path, kind, value, node))

    walk(action, root, (), 0)
    return sorted(out, key=lambda s: s.kind not in ("string", "array"))


def coerce(value: object, slot: Slot) -> object | None:
    """``value`` in the slot's kind, ``None`` when it has no such form (a word in a number
    slot, a non-finite number: JSON has none). A list slot takes a list of strings as it is
    and any other value as its one element."""
    if slot.kind == "array":
        if isinstance(value, list):
            return value if all(isinstance(v, str) for v in value) else None
        one = coerce(value, Slot(slot.path, "string", value, {}))
        return [one] if one is not None else None
    if slot.kind == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return _number_text(value)
        return None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        try:  # an int first: a long digit string has no float (it overflows to inf)
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                return None
    if isinstance(value, int):  # any size: JSON's integers are unbounded, float() is not
        return value
    if not isinstance(value, float) or not math.isfinite(value):
        return None
    if slot.kind == "integer":
        return int(value) if value.is_integer() else None
    return value


def _number_text(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def fits(value: object, slot: Slot) -> bool:
    """``value`` is within what the slot's schema declares (``enum`` aside): bounds and
    lengths, so the server does not refuse it before the grader sees it."""
    node = slot.node
    if isinstance(value, list):
        fewest, most = node.get("minItems", 0), node.get("maxItems")
        return len(value) >= (fewest if isinstance(fewest, int) else 0) and not (
            isinstance(most, int) and len(value) > most
        )
    if isinstance(value, str):
        longest, shortest = node.get("maxLength"), node.get("minLength", 0)
        return len(value) >= (shortest if isinstance(shortest, int) else 0) and not (
            isinstance(longest, int) and len(value) > longest
        )
    if isinstance(value, int | float) and not isinstance(value, bool):
        for key, bad in (
            ("minimum", lambda b: value < b),
            ("maximum", lambda b: value > b),
            ("exclusiveMinimum", lambda b: value <= b),
            ("exclusiveMaximum", lambda b: value >= b),
        ):
            bound = node.get(key)
            if isinstance(bound, int | float) and not isinstance(bound, bool) and bad(bound):
                return False
    return True


def fill(action: dict[str, Any], slot: Slot, value: object) -> dict[str, Any]:
    """A copy of ``action`` with ``value`` at ``slot.path``."""
    out = copy.deepcopy(action)
    target: Any = out
    for key in slot.path[:-1]:
        target = target[key]
    target[slot.path[-1]] = value
    return out
