"""Turning a model's reply into an action dict.

Order: the first fenced code block holding a JSON object, else the first JSON object anywhere
in the text, else -- when the action schema has exactly one string field -- the whole reply
(stripped) as that field. ``<think>...</think>`` blocks of reasoning models are dropped first.
A reply that gives none of these raises :class:`ActionParseError`, which the runner records
as a step with reward 0 and an error (never a crash).
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)


class ActionParseError(ValueError):
    """The reply holds no usable action; the message says what was expected."""


def action_fields(action_schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The action's properties, without OpenEnv's ``metadata`` field."""
    props = dict(action_schema.get("properties") or {})
    props.pop("metadata", None)
    return props


def single_string_field(action_schema: dict[str, Any]) -> str | None:
    """The name of the action's only string field, or ``None`` when there is not exactly one
    field or it is not a string."""
    props = action_fields(action_schema)
    if len(props) != 1:
        return None
    name, spec = next(iter(props.items()))
    types = spec.get("type")
    if types == "string" or (isinstance(types, list) and "string" in types):
        return name
    if any(alt.get("type") == "string" for alt in spec.get("anyOf", []) if isinstance(alt, dict)):
        return name
    return None


def _first_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def _unwrap(obj: dict[str, Any], action_schema: dict[str, Any]) -> dict[str, Any]:
    """``{"action": {...}}`` -> ``{...}`` when the action itself has no ``action`` field."""
    props = action_fields(action_schema)
    if set(obj) == {"action"} and isinstance(obj["action"], dict) and "action" not in props:
        return obj["action"]
    return obj


def parse_action(reply: str | None, action_schema: dict[str, Any]) -> dict[str, Any]:
    """The action a model's reply stands for.

    Args:
        reply: the assistant message's text (``None`` for an empty message).
        action_schema: the ``action`` JSON Schema from ``GET /schema``.

    Returns:
        The action fields (a dict to send as a ``step`` frame's data).

    Raises:
        ActionParseError: no JSON object in the reply and no single string field to fall
            back on, or the reply is empty.
    """
    text = _THINK.sub("", reply or "").strip()
    for match in _FENCE.finditer(text):
        obj = _first_object(match.group(2))
        if obj is not None:
            return _unwrap(obj, action_schema)
    obj = _first_object(text)
    if obj is not None:
        return _unwrap(obj, action_schema)
    field = single_string_field(action_schema)
    if field is not None:
        fenced = _FENCE.search(text)
        value = (fenced.group(2) if fenced else text).strip()
        if value:
            return {field: value}
        raise ActionParseError("the reply is empty; expected the action as a JSON object")
    if not text:
        raise ActionParseError("the reply is empty; expected the action as a JSON object")
    fields = ", ".join(action_fields(action_schema)) or "(none)"
    raise ActionParseError(
        f"no JSON object in the reply; expected an action object with "
        f"fields {fields}: {text[:120]!r}"
    )
