"""Walking a JSON Schema as pydantic (OpenEnv's ``/schema``) and FastMCP (``tools/list``)
write them: local ``$ref`` into ``$defs``, ``allOf`` of one item, ``type`` as a string or a
list."""

from __future__ import annotations

from typing import Any

MAX_REF_DEPTH = 20  # $ref hops followed before giving up (a cycle)


def resolve(node: object, root: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """Follow local ``$ref`` (``#/$defs/X``) and collapse ``allOf`` of one item.

    Args:
        node: a schema node (anything; a non-dict resolves to ``{}``).
        root: the document ``$ref`` paths are read from.

    Returns:
        The resolved node (``{}`` for a remote or dangling ``$ref``).
    """
    while isinstance(node, dict) and "$ref" in node and depth < MAX_REF_DEPTH:
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return {}
        target: object = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        node = target
        depth += 1
    if isinstance(node, dict) and isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
        merged = {k: v for k, v in node.items() if k != "allOf"}
        merged.update(resolve(node["allOf"][0], root, depth + 1))
        return merged
    return node if isinstance(node, dict) else {}


def types_of(node: dict[str, Any]) -> list[str]:
    """The JSON Schema ``type`` of ``node`` as a list (``[]`` when it declares none)."""
    t = node.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []
