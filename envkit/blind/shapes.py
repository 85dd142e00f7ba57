"""Every action shape an environment offers, as one JSON Schema an action generator can draw
from.

OpenEnv's ``/schema`` types a tool call's ``arguments`` as a free object (``Dict[str, Any]``;
``CallToolAction`` in ``openenv.core.env_server.mcp_types``); each tool's own input schema
appears only in the tool list (an observation field, or MCP ``tools/list``). Drawn from the
``/schema`` action alone, every ``arguments`` is ``{}`` and a tool that needs one is refused,
so no generated action reaches the grader. :func:`refine` puts each tool's input schema in
place of ``arguments``: one ``anyOf`` branch per tool.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from envkit.blind.schema import resolve, types_of

#: Action fields that name the tool to call (OpenEnv's ``CallToolAction.tool_name``; common
#: spellings of environments that define their own).
NAME_FIELDS = ("tool_name", "tool", "function_name", "function", "name")
#: Action fields that carry the tool's keyword arguments.
ARGUMENT_FIELDS = ("arguments", "args", "tool_args", "tool_input", "parameters", "params", "input")
#: Keys of a tool entry that hold its input schema (the templates' ``input_schema``, MCP's
#: ``inputSchema``, OpenAI's and FastMCP's ``parameters``).
SCHEMA_KEYS = ("input_schema", "inputSchema", "parameters", "schema", "args_schema")
MAX_TOOLS = 32  # tools kept from one list (a larger list is cut)


@dataclass(frozen=True)
class Tool:
    """One tool an environment offers.

    Attributes:
        name: the tool's name, as the action sends it.
        schema: its input JSON Schema (an object schema; ``{"type": "object"}`` when the
            list gave none).
        description: its description (``""`` when none).
    """

    name: str
    schema: dict[str, Any]
    description: str = ""


@dataclass(frozen=True)
class CallShape:
    """How an action schema spells a tool call.

    Attributes:
        name_field: the field naming the tool (``tool_name``).
        arguments_field: the field holding its arguments (``arguments``).
        names: the tool names the schema allows (its ``enum``/``Literal``), ``None`` when
            any string is allowed.
    """

    name_field: str
    arguments_field: str
    names: tuple[str, ...] | None


def _tool(entry: object) -> Tool | None:
    """A :class:`Tool` from one entry of a tool list (templates, MCP, OpenAI function form)."""
    if not isinstance(entry, dict):
        return None
    if isinstance(entry.get("function"), dict):  # OpenAI: {"type": "function", "function": {...}}
        entry = entry["function"]
    name = entry.get("name")
    if not isinstance(name, str) or not name or len(name) > 200:
        return None
    schema: object = next((entry[k] for k in SCHEMA_KEYS if isinstance(entry.get(k), dict)), None)
    if not isinstance(schema, dict):
        schema = {"type": "object"}
    description = entry.get("description")
    return Tool(name, schema, description if isinstance(description, str) else "")


def tools_from_list(entries: object) -> list[Tool]:
    """The tools of a tool list (``tools/list``'s ``result.tools``, or an observation's
    field): entries without a usable name are skipped; at most :data:`MAX_TOOLS`."""
    if not isinstance(entries, list):
        return []
    out: list[Tool] = []
    seen: set[str] = set()
    for entry in entries:
        tool = _tool(entry)
        if tool is not None and tool.name not in seen:
            seen.add(tool.name)
            out.append(tool)
        if len(out) >= MAX_TOOLS:
            break
    return out


def tools_from_observation(observation: object) -> list[Tool]:
    """The tools an observation lists: the first list (top level or in ``metadata``) whose
    entries carry a name and an input schema, e.g. ``tools: [{"name", "input_schema"}]``."""
    if not isinstance(observation, dict):
        return []
    places = [observation]
    if isinstance(observation.get("metadata"), dict):
        places.append(observation["metadata"])
    for place in places:
        for value in place.values():
            if not isinstance(value, list) or not value or not isinstance(value[0], dict):
                continue
            function = value[0].get("function")
            function = function if isinstance(function, dict) else {}
            if not any(k in value[0] or k in function for k in SCHEMA_KEYS):
                continue
            tools = tools_from_list(value)
            if tools:
                return tools
    return []


def call_shape(schema: dict[str, Any]) -> CallShape | None:
    """How ``schema`` (the ``/schema`` action) spells a tool call, ``None`` when it does not
    look like one: a string field naming the tool and an object (or string) field for its
    arguments."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return None
    nodes = {k: resolve(v, schema) for k, v in props.items()}
    name_field = next(
        (f for f in NAME_FIELDS if f in nodes and _is_name(nodes[f])),
        None,
    )
    args_field = next(
        (f for f in ARGUMENT_FIELDS if f in nodes and _is_arguments(nodes[f], schema)), None
    )
    if name_field is None or args_field is None:
        return None
    return CallShape(name_field, args_field, _names(nodes[name_field], schema))


def _is_name(node: dict[str, Any]) -> bool:
    if isinstance(node.get("enum"), list) or "const" in node:
        return all(isinstance(v, str) for v in node.get("enum") or [node.get("const")])
    return "string" in types_of(node)


def _is_arguments(node: dict[str, Any], root: dict[str, Any]) -> bool:
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if isinstance(options, list):
            return any(_is_arguments(resolve(o, root), root) for o in options)
    return "object" in types_of(node)


def _names(node: dict[str, Any], root: dict[str, Any]) -> tuple[str, ...] | None:
    if isinstance(node.get("enum"), list):
        return tuple(v for v in node["enum"] if isinstance(v, str))
    if isinstance(node.get("const"), str):
        return (node["const"],)
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if isinstance(options, list):
            out: list[str] = []
            for o in options:
                sub = _names(resolve(o, root), root)
                if sub is None:
                    return None
                out += sub
            return tuple(out)
    return None


def _rename_refs(node: object, prefix: str) -> object:
    """``node`` with every local ``#/$defs/X`` renamed ``#/$defs/{prefix}X``."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str) and v.startswith("#/$defs/"):
                out[k] = "#/$defs/" + prefix + v[len("#/$defs/") :]
            elif k == "$defs":
                continue
            else:
                out[k] = _rename_refs(v, prefix)
        return out
    if isinstance(node, list):
        return [_rename_refs(v, prefix) for v in node]
    return node


def refine(schema: dict[str, Any], tools: list[Tool]) -> dict[str, Any] | None:
    """``schema`` with one ``anyOf`` branch per tool, ``arguments`` following the tool's own
    input schema; ``None`` when ``schema`` is not a tool call or no listed tool may be named.

    Args:
        schema: the ``/schema`` action JSON Schema (not modified).
        tools: the tools offered (:func:`tools_from_observation`, ``tools/list``).

    Returns:
        A new JSON Schema whose every instance is a call of one listed tool with arguments
        its input schema accepts; tools the action schema's name ``enum`` leaves out are
        dropped (the server would refuse them).
    """
    shape = call_shape(schema)
    if shape is None or not tools:
        return None
    allowed = [t for t in tools if shape.names is None or t.name in shape.names]
    if not allowed:
        return None
    defs: dict[str, Any] = dict(schema.get("$defs") or {})
    branches: list[dict[str, Any]] = []
    for i, tool in enumerate(allowed):
        prefix = f"tool{i}__"
        for name, sub in (tool.schema.get("$defs") or {}).items():
            defs[prefix + name] = _rename_refs(sub, prefix)
        renamed = _rename_refs(tool.schema, prefix)
        args = dict(renamed) if isinstance(renamed, dict) else {}
        args.setdefault("type", "object")
        if isinstance(args.get("properties"), dict):  # a function takes no other keyword
            args.setdefault("additionalProperties", False)
        branch = {k: copy.deepcopy(v) for k, v in schema.items() if k not in ("$defs", "title")}
        props = dict(branch.get("properties") or {})
        props[shape.name_field] = {"type": "string", "const": tool.name}
        props[shape.arguments_field] = args
        branch["properties"] = props
        required = [r for r in branch.get("required") or [] if r != shape.arguments_field]
        branch["required"] = [*required, shape.arguments_field] + (
            [] if shape.name_field in required else [shape.name_field]
        )
        branches.append(branch)
    out: dict[str, Any] = {"anyOf": branches}
    if defs:
        out["$defs"] = defs
    return out


def tool_of(action: dict[str, Any], shape: CallShape | None) -> str | None:
    """The tool ``action`` calls, ``None`` when it is not a tool call."""
    if shape is None:
        return None
    name = action.get(shape.name_field)
    return name if isinstance(name, str) else None


def is_tool_call(action: object) -> bool:
    """``action`` names a tool and carries its arguments (:data:`NAME_FIELDS`,
    :data:`ARGUMENT_FIELDS`)."""
    return (
        isinstance(action, dict)
        and any(isinstance(action.get(f), str) for f in NAME_FIELDS)
        and any(isinstance(action.get(f), dict | str) for f in ARGUMENT_FIELDS)
    )


def tool_error(observation: object) -> str | None:
    """The error an observation reports for the tool call that produced it, ``None`` when it
    reports none: a non-empty ``error`` field, a string (the templates) or an object with a
    ``message`` (OpenEnv's ``CallToolObservation.error``)."""
    if not isinstance(observation, dict):
        return None
    error = observation.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        return str(message) if message else (str(error) if error else None)
    if isinstance(error, str) and error.strip():
        return error.strip()
    return None
