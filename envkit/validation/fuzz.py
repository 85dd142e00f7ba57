"""Actions for the runtime stage, built from the ``/schema`` action JSON Schema.

Three families:

* **fuzzed** actions: drawn with hypothesis-jsonschema (a well-kept generator of values that
  satisfy a JSON Schema, built on hypothesis), seeded, derandomised and without a database
  (:mod:`envkit.validation.schema_draws`, imported only when actions are drawn);
* **degenerate** actions: empty values, minimum values, maximum values, and the first fuzzed
  action repeated — what a reward hacker tries first;
* **invalid** actions: a required field missing, a field of the wrong type, an unknown extra
  field — what the server must reject with VALIDATION_ERROR / HTTP 422.

Plus :func:`shrink` (minimise an action that makes the environment raise, field by field) and
:func:`first_difference` (the first differing field path of two JSON values, for the
determinism findings).

OpenEnv's ``Action`` carries a ``metadata`` field; it is never generated or sent.
"""

from __future__ import annotations

import copy
import json
import math
import threading
from collections.abc import Callable
from typing import Any

from envkit.blind.schema import resolve, types_of

STRIPPED_FIELDS = ("metadata",)
IMPORT_LOCK = threading.Lock()
"""Held while hypothesis, hypothesis-jsonschema and so jsonschema are imported (the warm-up
thread of :func:`warm_up` does it beside the runtime stage): a check that imports jsonschema
itself takes it first, since two threads importing jsonschema at once can each see the other's
partly initialised module (``cannot import name 'Draft3Validator'``)."""
MAX_STRING = 1000  # "maximum" strings when the schema sets no maxLength


def action_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The action schema without openenv's ``metadata`` field (a deep copy)."""
    out = copy.deepcopy(schema)
    props = out.get("properties")
    if isinstance(props, dict):
        for name in STRIPPED_FIELDS:
            props.pop(name, None)
    req = out.get("required")
    if isinstance(req, list):
        out["required"] = [r for r in req if r not in STRIPPED_FIELDS]
    return out


def _json_safe(value: object) -> bool:
    """True when ``value`` survives JSON over a WebSocket as UTF-8 (no lone surrogates, no
    NaN)."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, TypeError, UnicodeEncodeError):
        return False
    return True


# -- fuzzed actions ----------------------------------------------------------------------------
def warm_up() -> threading.Thread:
    """Import hypothesis and hypothesis-jsonschema (about 0.7 s of imports, half of a short
    ``--url`` run) in a background thread, inside the sandbox, while the runtime stage waits
    for the server and plays the endpoint checks; :func:`generate_actions` then finds them
    loaded (it waits for the thread through the sandbox's lock). Never raises: a failure
    shows again, and is reported, when the actions are generated.

    Returns:
        The started daemon thread.
    """

    def load() -> None:
        try:
            # imported here, in the thread: the import is what is warmed up
            with IMPORT_LOCK:
                from envkit.validation import schema_draws

                with schema_draws.sandbox():
                    pass
        except Exception:  # noqa: BLE001, S110 - generate_actions reports it
            pass

    thread = threading.Thread(target=load, name="envkit-fuzz-warm-up", daemon=True)
    thread.start()
    return thread


def generate_actions(schema: dict[str, Any], count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` actions satisfying ``schema``, the same list for the same seed.

    Args:
        schema: the action JSON Schema from ``/schema`` (``metadata`` is stripped).
        count: how many actions (>= 0). Fewer are returned only when the schema allows fewer
            distinct values.
        seed: hypothesis seed (``--seed``).

    Returns:
        JSON objects; values that cannot travel as UTF-8 JSON (lone surrogates) are skipped.

    Raises:
        ValueError: hypothesis-jsonschema cannot generate from this schema (unsupported
            keyword or unsatisfiable); the message says why.
    """
    if count <= 0:
        return []
    # imported when actions are drawn, not with this module: a --static run never pays
    # for hypothesis (about 0.3 s)
    from envkit.validation import schema_draws

    out = schema_draws.draw(action_schema(schema), count, seed, _json_safe)
    for action in out:
        for name in STRIPPED_FIELDS:
            action.pop(name, None)
    return out


# -- schema walking --------------------------------------------------------------------------
def extreme_value(node: object, root: dict[str, Any], mode: str, depth: int = 0) -> object:
    """A value allowed by ``node`` at one extreme.

    Args:
        mode: ``empty`` (empty strings, zeros, false, empty lists, required fields only),
            ``minimum`` (declared minimums, shortest strings), ``maximum`` (declared
            maximums, longest strings, all fields).
    """
    node = resolve(node, root)
    if depth > 8:
        return None
    if "const" in node:
        return node["const"]
    if isinstance(node.get("enum"), list) and node["enum"]:
        return node["enum"][-1] if mode == "maximum" else node["enum"][0]
    for key in ("anyOf", "oneOf"):
        options = [o for o in node.get(key) or [] if types_of(resolve(o, root)) != ["null"]]
        if options:
            return extreme_value(options[0], root, mode, depth + 1)
    types = [t for t in types_of(node) if t != "null"] or types_of(node)
    kind = types[0] if types else ("object" if "properties" in node else None)
    if kind == "string":
        lo = int(node.get("minLength", 0) or 0)
        hi = node.get("maxLength")
        if mode == "maximum":
            n = int(hi) if isinstance(hi, int) else MAX_STRING
            return "a" * max(n, lo)
        return "a" * lo
    if kind in ("integer", "number"):
        lo = node.get("minimum", node.get("exclusiveMinimum"))
        hi = node.get("maximum", node.get("exclusiveMaximum"))
        step = 1 if kind == "integer" else 1e-6
        if mode == "maximum":
            value: Any = hi if isinstance(hi, (int, float)) else 10**6
            if "exclusiveMaximum" in node and "maximum" not in node:
                value = value - step
        elif mode == "minimum" and isinstance(lo, (int, float)):
            value = lo + (step if "exclusiveMinimum" in node and "minimum" not in node else 0)
        else:
            value = 0
            if isinstance(lo, (int, float)) and value < lo:
                value = lo + (step if "minimum" not in node else 0)
            if isinstance(hi, (int, float)) and value > hi:
                value = hi
        if kind == "integer":
            value = math.ceil(value) if mode != "maximum" else math.floor(value)
        return value
    if kind == "boolean":
        return mode == "maximum"
    if kind == "null":
        return None
    if kind == "array":
        items = node.get("items", {})
        lo = int(node.get("minItems", 0) or 0)
        n = lo
        if mode == "maximum":
            hi = node.get("maxItems")
            n = max(lo, int(hi) if isinstance(hi, int) and hi <= 16 else 3)
        return [extreme_value(items, root, mode, depth + 1) for _ in range(n)]
    if kind == "object":
        props = node.get("properties") or {}
        required = set(node.get("required") or [])
        return {
            name: extreme_value(sub, root, mode, depth + 1)
            for name, sub in props.items()
            if name not in STRIPPED_FIELDS and (mode == "maximum" or name in required)
        }
    return None


def degenerate_actions(
    schema: dict[str, Any], first_fuzzed: dict[str, Any] | None = None
) -> dict[str, dict[str, Any]]:
    """The degenerate policies' (constant) actions, by name, without duplicates.

    Names: ``empty``, ``minimum``, ``maximum``, ``repeat-first`` (the first fuzzed action).
    """
    schema = action_schema(schema)
    out: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    candidates: list[tuple[str, object]] = [
        (mode, extreme_value(schema, schema, mode)) for mode in ("empty", "minimum", "maximum")
    ]
    if first_fuzzed is not None:
        candidates.append(("repeat-first", first_fuzzed))
    for name, action in candidates:
        if not isinstance(action, dict):
            continue
        key = json.dumps(action, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out[name] = action
    return out


_WRONG = {
    "string": ["not", "a", "string"],
    "integer": "not-an-integer",
    "number": "not-a-number",
    "boolean": "not-a-boolean",
    "array": "not-an-array",
    "object": "not-an-object",
}


def invalid_actions(
    schema: dict[str, Any], valid: dict[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    """Actions that break ``schema``, each with a description.

    Built from one ``valid`` action: each required field removed, each typed field given a
    value of the wrong type, and an unknown field added when the schema forbids extras.
    """
    schema = action_schema(schema)
    props = schema.get("properties") or {}
    out: list[tuple[str, dict[str, Any]]] = []
    for name in schema.get("required") or []:
        if name in valid:
            bad = {k: v for k, v in valid.items() if k != name}
            out.append((f"required field `{name}` missing", bad))
    for name, sub in props.items():
        node = resolve(sub, schema)
        types = types_of(node)
        if len(types) != 1 or types[0] not in _WRONG or "anyOf" in node or "oneOf" in node:
            continue
        bad = dict(valid)
        bad[name] = _WRONG[types[0]]
        out.append(
            (f"field `{name}` of the wrong type ({json.dumps(bad[name])} for {types[0]})", bad)
        )
    if schema.get("additionalProperties") is False:
        bad = dict(valid)
        bad["envkit_unexpected_field"] = 1
        out.append(("unknown extra field `envkit_unexpected_field`", bad))
    return out


# -- shrinking -----------------------------------------------------------------------------
def _smaller(value: object) -> list[object]:
    if isinstance(value, str):
        out = [""]
        if len(value) > 1:
            out += [value[: len(value) // 2], value[:-1], value[1:]]
        if value and any(c != "a" for c in value):
            out.append("a" * len(value))
        return out
    if isinstance(value, bool):
        return [False] if value else []
    if isinstance(value, int):
        return [0, value // 2] if value else []
    if isinstance(value, float):
        return [0.0, float(int(value))] if value else []
    if isinstance(value, list):
        out = [[]] if value else []
        if len(value) > 1:
            out += [value[: len(value) // 2], value[:-1]]
        return out
    if isinstance(value, dict):
        return [{k: v for k, v in value.items() if k != key} for key in value]
    return []


def shrink(
    action: dict[str, Any],
    still_fails: Callable[[dict[str, Any]], bool],
    *,
    required: set[str] | frozenset[str] = frozenset(),
    budget: int = 60,
) -> dict[str, Any]:
    """Minimise ``action`` field by field while ``still_fails(candidate)`` stays true.

    Tries, per field: dropping it (when not required), then simpler values (shorter strings,
    0, empty lists); keeps the first candidate that still fails and starts over.

    Args:
        action: an action that fails.
        still_fails: replays a candidate; True when it still fails the same way.
        required: fields that must stay.
        budget: at most this many replays.
    """
    current = dict(action)
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for key in list(current):
            candidates: list[dict[str, Any]] = []
            if key not in required:
                candidates.append({k: v for k, v in current.items() if k != key})
            for smaller in _smaller(current[key]):
                if smaller != current[key]:
                    candidates.append({**current, key: smaller})
            for cand in candidates:
                if tries >= budget:
                    break
                tries += 1
                if still_fails(cand):
                    current = cand
                    improved = True
                    break
            if improved:
                break
    return current


# -- comparison ----------------------------------------------------------------------------
_MISSING = object()


def first_difference(a: object, b: object, path: str = "") -> tuple[str, object, object] | None:
    """The first differing field of two JSON values: ``(path, a_value, b_value)`` or None.

    Paths look like ``target``, ``board[2].cell``; ``<missing>`` marks an absent key.
    """
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{key}" if path else str(key)
            va, vb = a.get(key, _MISSING), b.get(key, _MISSING)
            if va is _MISSING or vb is _MISSING:
                return (
                    sub,
                    "<missing>" if va is _MISSING else va,
                    "<missing>" if vb is _MISSING else vb,
                )
            diff = first_difference(va, vb, sub)
            if diff:
                return diff
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (va, vb) in enumerate(zip(a, b)):
            diff = first_difference(va, vb, f"{path}[{i}]")
            if diff:
                return diff
        if len(a) != len(b):
            return (f"{path} (length)" if path else "(length)", len(a), len(b))
        return None
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return None
    if type(a) is not type(b) and not (
        isinstance(a, (int, float))
        and isinstance(b, (int, float))
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        return (path or "(value)", a, b)
    if a != b:
        return (path or "(value)", a, b)
    return None


def json_key(value: object) -> str:
    """``value`` as canonical JSON (sorted keys; non-JSON values as ``str``): the key under
    which the runtime checks compare and count actions, observations and leaves."""
    return json.dumps(value, sort_keys=True, default=str)


def short_json(value: object, limit: int = 160) -> str:
    """Compact JSON for messages, cut at ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
