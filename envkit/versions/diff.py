"""What changed between two environments, and whether a trained policy survives it.

A policy WRITES actions and READS observations, so the two are judged in opposite
directions (docs/versions.md has the table):

- **action**: breaking when the set of actions the new environment accepts is smaller than
  the old one's (a field removed or renamed, a type narrowed, a field newly required, an
  enum value or a range cut, extra fields newly forbidden); compatible when it only grows
  (a new optional field, a wider type or range).
- **observation**: breaking when the new environment may send what the policy never saw or
  stops sending what it reads (a field removed or renamed, a type widened or changed, new
  enum values, a wider range); compatible when it only adds fields or narrows.
- **state**: listed as compatible: a policy never sees the state (an oracle or a harness
  reading it may still break).
- **reward range**: breaking: returns measured before are on another scale.
- **reset options**: an option or a value removed is breaking (OpenEnv drops reset keys the
  signature lacks without an error); an added one is compatible.
- **manifest** keys and a server's **metadata**: listed, never breaking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envkit.envdir.digest import canonical_json, short
from envkit.versions.snapshot import EnvSnapshot

BREAKING, COMPATIBLE, INFO = "breaking", "compatible", "info"
IMPACTS = (BREAKING, COMPATIBLE, INFO)

_COSMETIC = ("title", "description", "examples", "default")
_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")


@dataclass(frozen=True)
class Change:
    """One difference.

    Attributes:
        area: ``action``, ``observation``, ``state``, ``reward``, ``reset``, ``manifest``
            or ``metadata``.
        field: the field or key (``guess``, ``validation.resources.cpu``), ``None`` for the
            area as a whole.
        change: ``removed``, ``added``, ``renamed``, ``type``, ``required``, ``optional``,
            ``constraint``, ``schema``, ``extra``, ``description`` or ``changed``.
        impact: ``breaking``, ``compatible`` or ``info``.
        message: one line for a reader.
        old, new: the values compared (JSON data), when short enough to show.
    """

    area: str
    field: str | None
    change: str
    impact: str
    message: str
    old: Any = None
    new: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "area": self.area,
            "field": self.field,
            "change": self.change,
            "impact": self.impact,
            "message": self.message,
            "old": self.old,
            "new": self.new,
        }


@dataclass
class DiffResult:
    """The changes from ``old`` to ``new``.

    Attributes:
        old, new: the two snapshots.
        changes: every change, breaking first, then by area and field.
        notes: what could not be compared and why.
    """

    old: EnvSnapshot
    new: EnvSnapshot
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def count(self, impact: str) -> int:
        return sum(1 for c in self.changes if c.impact == impact)

    @property
    def breaking(self) -> bool:
        return self.count(BREAKING) > 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``envkit diff --format json`` (full digests)."""

        def side(s: EnvSnapshot) -> dict[str, Any]:
            return {
                "label": s.label,
                "kind": s.kind,
                "env_digest": s.env_digest,
                "schema_digest": s.schema_digest,
            }

        return {
            "old": side(self.old),
            "new": side(self.new),
            "summary": {impact: self.count(impact) for impact in IMPACTS},
            "changes": [c.to_dict() for c in self.changes],
            "notes": list(self.notes),
        }


# -- JSON Schema helpers -----------------------------------------------------------------------
def _resolve(node: Any, root: dict[str, Any], depth: int = 0) -> Any:
    """``node`` with a local ``$ref`` (``#/$defs/X``) replaced by its target (also inside
    ``allOf`` of one item, how pydantic wraps a referenced model with a description)."""
    if not isinstance(node, dict) or depth > 20:
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _resolve({**(target or {}), **rest}, root, depth + 1)
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        rest = {k: v for k, v in node.items() if k != "allOf"}
        return _resolve({**_resolve(all_of[0], root, depth + 1), **rest}, root, depth + 1)
    return node


def _strip(node: object, root: dict[str, Any]) -> object:
    """``node`` resolved, without the cosmetic keywords (titles, descriptions, examples,
    defaults), recursively: what a field accepts or carries."""
    node = _resolve(node, root)
    if isinstance(node, dict):
        return {k: _strip(v, root) for k, v in node.items() if k not in _COSMETIC}
    if isinstance(node, list):
        return [_strip(v, root) for v in node]
    return node


def _types(node: dict[str, Any]) -> set[str]:
    """The JSON types ``node`` admits (``integer`` counted inside ``number``'s values)."""
    t = node.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return {x for x in t if isinstance(x, str)}
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            return set().union(*(_types(x) for x in node[key] if isinstance(x, dict)))
    if isinstance(node.get("enum"), list):
        return {_json_type(v) for v in node["enum"]}
    if "const" in node:
        return {_json_type(node["const"])}
    return {"any"}


def _json_type(value: object) -> str:
    """The JSON Schema type name of a JSON value (``True`` is a ``boolean``, not a number)."""
    if isinstance(value, bool):
        return "boolean"
    names = {int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    return "null" if value is None else names.get(type(value), "any")


def _admits(wide: set[str], narrow: set[str]) -> bool:
    """Every value of types ``narrow`` is one of types ``wide``."""
    if "any" in wide:
        return True
    return all(t in wide or (t == "integer" and "number" in wide) for t in narrow)


def _shown(value: object) -> object:
    """``value`` when its JSON is short (<= 200 characters), else a marker."""
    return value if len(canonical_json(value)) <= 200 else "(long)"


def _props(schema: object) -> tuple[dict[str, Any], set[str], dict[str, Any]]:
    """``(properties, required, root)`` of a top-level object schema."""
    root = schema if isinstance(schema, dict) else {}
    resolved = _resolve(root, root)
    props = resolved.get("properties") if isinstance(resolved.get("properties"), dict) else {}
    req = resolved.get("required") if isinstance(resolved.get("required"), list) else []
    return props, set(req), root


def _bounds(old: dict[str, Any], new: dict[str, Any]) -> tuple[bool, bool]:
    """``(shrank, grew)``: whether ``new``'s bounds and enum admit fewer values than ``old``'s
    somewhere, and whether they admit more somewhere."""
    shrank = grew = False
    for keys, tighter in ((_LOWER, lambda o, n: n > o), (_UPPER, lambda o, n: n < o)):
        for k in keys:
            o, n = old.get(k), new.get(k)
            if o == n:
                continue
            if n is None:
                grew = True
            elif o is None or tighter(o, n):
                shrank = True
            else:
                grew = True
    o_enum, n_enum = old.get("enum"), new.get("enum")
    if o_enum != n_enum:
        o_set = {canonical_json(v) for v in (o_enum or [])}
        n_set = {canonical_json(v) for v in (n_enum or [])}
        shrank = shrank or (n_enum is not None and (o_enum is None or bool(o_set - n_set)))
        grew = grew or (o_enum is not None and (n_enum is None or bool(n_set - o_set)))
    return shrank, grew


@dataclass(frozen=True)
class _Side:
    """One model schema being compared: its area, whether the policy writes it (action) or
    reads it (observation), and the two roots ``$ref`` resolves against."""

    area: str
    writes: bool
    old_root: dict[str, Any]
    new_root: dict[str, Any]


def _field_changes(side: _Side, name: str, old: object, new: object) -> list[Change]:
    """How the schema of one field present on both sides changed."""
    a, b = _strip(old, side.old_root), _strip(new, side.new_root)
    where = f"{side.area} field `{name}`"
    if a == b:
        if _resolve(old, side.old_root) != _resolve(new, side.new_root):
            return [
                Change(
                    side.area,
                    name,
                    "description",
                    COMPATIBLE,
                    f"{where}: title, description or default changed",
                )
            ]
        return []
    ta, tb = _types(a), _types(b)
    if ta != tb:
        # a policy's actions must stay admitted; its observations must stay within what it saw
        lost = not _admits(tb, ta) if side.writes else not _admits(ta, tb)
        return [
            Change(
                side.area,
                name,
                "type",
                BREAKING if lost else COMPATIBLE,
                f"{where}: type {'|'.join(sorted(ta))} -> {'|'.join(sorted(tb))}",
                sorted(ta),
                sorted(tb),
            )
        ]
    out: list[Change] = []
    shrank, grew = _bounds(a, b)
    if shrank or grew:
        lost = shrank if side.writes else grew
        limits = ("enum", *_LOWER, *_UPPER)
        olds = {k: a[k] for k in limits if k in a}
        news = {k: b[k] for k in limits if k in b}
        verb = (
            "narrowed" if shrank and not grew else "widened" if grew and not shrank else "changed"
        )
        out.append(
            Change(
                side.area,
                name,
                "constraint",
                BREAKING if lost else COMPATIBLE,
                f"{where}: allowed values {verb}",
                _shown(olds),
                _shown(news),
            )
        )
    skip = ("type", "enum", *_LOWER, *_UPPER)  # the type sets are equal here
    rest_a = {k: v for k, v in a.items() if k not in skip}
    rest_b = {k: v for k, v in b.items() if k not in skip}
    if rest_a != rest_b:
        out.append(
            Change(
                side.area,
                name,
                "schema",
                BREAKING,
                f"{where}: its schema changed (format, pattern, items or nested fields)",
                _shown(rest_a),
                _shown(rest_b),
            )
        )
    return out


def _renames(
    side: _Side, removed: list[str], added: list[str], op: dict, np_: dict
) -> list[tuple[str, str]]:
    """Removed/added pairs whose schemas are the same apart from titles and descriptions,
    when the match is one to one: a rename, reported once."""

    def same(r: str, a: str) -> bool:
        return _strip(op[r], side.old_root) == _strip(np_[a], side.new_root)

    pairs = []
    for r in removed:
        hits = [a for a in added if same(r, a)]
        if len(hits) == 1 and sum(1 for r2 in removed if same(r2, hits[0])) == 1:
            pairs.append((r, hits[0]))
    return pairs


def compare_models(area: str, old: object, new: object, *, writes: bool) -> list[Change]:
    """The changes of one model's JSON Schema (``/schema``'s ``action``, ``observation`` or
    ``state``), judged for a policy that writes it (``writes``) or reads it."""
    op, oreq, oroot = _props(old)
    np_, nreq, nroot = _props(new)
    side = _Side(area, writes, oroot, nroot)
    removed = [k for k in op if k not in np_]
    added = [k for k in np_ if k not in op]
    renames = _renames(side, removed, added, op, np_)
    out = [
        Change(area, r, "renamed", BREAKING, f"{area} field `{r}` renamed to `{a}`", r, a)
        for r, a in renames
    ]
    gone, new_names = {r for r, _ in renames}, {a for _, a in renames}
    out += [
        Change(area, r, "removed", BREAKING, f"{area} field `{r}` removed")
        for r in removed
        if r not in gone
    ]
    for a in added:
        if a in new_names:
            continue
        needed = writes and a in nreq
        kind = "a new required" if needed else "a new optional" if writes else "a new"
        out.append(
            Change(
                area,
                a,
                "added",
                BREAKING if needed else COMPATIBLE,
                f"{area} field `{a}` added ({kind} field)",
            )
        )
    for k in (k for k in op if k in np_):
        out += _field_changes(side, k, op[k], np_[k])
        if k in nreq and k not in oreq:
            out.append(
                Change(
                    area,
                    k,
                    "required",
                    BREAKING if writes else COMPATIBLE,
                    f"{area} field `{k}` is now required",
                )
            )
        elif k in oreq and k not in nreq:
            out.append(
                Change(area, k, "optional", COMPATIBLE, f"{area} field `{k}` is no longer required")
            )
    if writes:
        o_extra = _resolve(oroot, oroot).get("additionalProperties", True) is not False
        n_extra = _resolve(nroot, nroot).get("additionalProperties", True) is not False
        if o_extra != n_extra:
            out.append(
                Change(
                    area,
                    None,
                    "extra",
                    BREAKING if o_extra else COMPATIBLE,
                    f"{area}: unknown fields are now {'accepted' if n_extra else 'rejected'}",
                )
            )
    return out


_ORDER = {impact: i for i, impact in enumerate(IMPACTS)}
_AREAS = ("action", "observation", "reward", "reset", "state", "manifest", "metadata")
_REWARD_KEYS = ("validation.reward.range", "validation.reward_range")
_METADATA_KEYS = ("name", "version", "description", "author", "documentation_url")


def _flatten(data: object, prefix: str = "") -> dict[str, Any]:
    """``{"a.b.c": value}`` of nested mappings (lists stay whole values)."""
    if not isinstance(data, dict):
        return {prefix: data} if prefix else {}
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        out.update(_flatten(v, key) if isinstance(v, dict) and v else {key: v})
    return out


def _keyed(area: str, old: dict[str, Any], new: dict[str, Any], skip: tuple[str, ...]) -> list:
    """One ``info`` change per key whose value differs between two flat mappings."""
    out = []
    for key in sorted(set(old) | set(new)):
        if key in skip or canonical_json(old.get(key)) == canonical_json(new.get(key)):
            continue
        o, n = old.get(key), new.get(key)
        what = "added" if key not in old else "removed" if key not in new else "changed"
        shown = f"{canonical_json(_shown(o))} -> {canonical_json(_shown(n))}"
        out.append(
            Change(area, key, what, INFO, f"{area} `{key}` {what}: {shown}", _shown(o), _shown(n))
        )
    return out


def _reset_changes(old: dict[str, list[Any]], new: dict[str, list[Any]]) -> list[Change]:
    """Reset options: a removed option or value is breaking, an added one compatible."""
    out = []
    for name in sorted(set(old) | set(new)):
        if name not in new:
            out.append(Change("reset", name, "removed", BREAKING, f"reset option `{name}` removed"))
        elif name not in old:
            out.append(Change("reset", name, "added", COMPATIBLE, f"reset option `{name}` added"))
        else:
            o = {canonical_json(v) for v in old[name]}
            n = {canonical_json(v) for v in new[name]}
            if o - n:
                msg = f"reset option `{name}`: values removed ({', '.join(sorted(o - n))})"
                out.append(Change("reset", name, "constraint", BREAKING, msg, old[name], new[name]))
            elif n - o:
                msg = f"reset option `{name}`: values added ({', '.join(sorted(n - o))})"
                out.append(
                    Change("reset", name, "constraint", COMPATIBLE, msg, old[name], new[name])
                )
    return out


def diff(old: EnvSnapshot, new: EnvSnapshot) -> DiffResult:
    """Every change from ``old`` to ``new`` (module docstring: how each is judged).

    Facts one side lacks (a URL has no manifest, reward range or reset options) are not
    compared; ``notes`` says so.
    """
    result = DiffResult(old, new)
    changes = result.changes
    for area, writes in (("action", True), ("observation", False), ("state", False)):
        found = compare_models(area, old.schemas.get(area), new.schemas.get(area), writes=writes)
        if area == "state":  # a policy never sees the state
            found = [
                Change(c.area, c.field, c.change, COMPATIBLE, c.message, c.old, c.new)
                if c.impact == BREAKING
                else c
                for c in found
            ]
        changes += found
    if old.reward_range is not None and new.reward_range is not None:
        if list(old.reward_range) != list(new.reward_range):
            lo, hi = list(old.reward_range), list(new.reward_range)
            changes.append(
                Change(
                    "reward",
                    "range",
                    "changed",
                    BREAKING,
                    f"reward range {lo} -> {hi}: returns are on another scale",
                    lo,
                    hi,
                )
            )
    else:
        result.notes.append("reward range not compared: a URL has no manifest")
    if old.reset_options is not None and new.reset_options is not None:
        changes += _reset_changes(old.reset_options, new.reset_options)
    else:
        result.notes.append("reset options not compared: a URL has no source to read them from")
    if old.manifest is not None and new.manifest is not None:
        changes += _keyed("manifest", _flatten(old.manifest), _flatten(new.manifest), _REWARD_KEYS)
    if old.metadata is not None and new.metadata is not None:
        pick = lambda m: {k: m.get(k) for k in _METADATA_KEYS}  # noqa: E731
        changes += _keyed("metadata", pick(old.metadata), pick(new.metadata), ())
        if old.metadata.get("readme_content") != new.metadata.get("readme_content"):
            changes.append(
                Change(
                    "metadata",
                    "readme_content",
                    "changed",
                    INFO,
                    "metadata `readme_content` changed",
                )
            )
    changes.sort(key=lambda c: (_ORDER[c.impact], _AREAS.index(c.area), c.field or ""))
    return result


def render_text(result: DiffResult) -> str:
    """The text of ``envkit diff``: both sides with their digests, then the changes grouped
    by impact, then one summary line."""
    lines = []
    for name, s in (("old", result.old), ("new", result.new)):
        env = short(s.env_digest) or "-"
        lines.append(
            f"{name}: {s.label}  env-digest: {env}  schema-digest: {short(s.schema_digest)}"
        )
    lines.append("")
    titles = {
        BREAKING: "Breaking for a trained policy",
        COMPATIBLE: "Compatible",
        INFO: "Other changes",
    }
    for impact in IMPACTS:
        mine = [c for c in result.changes if c.impact == impact]
        if mine:
            lines.append(f"{titles[impact]} ({len(mine)}):")
            lines += [f"  {c.message}" for c in mine]
            lines.append("")
    if not result.changes:
        same = result.old.env_digest is not None and result.old.env_digest == result.new.env_digest
        lines.append("No changes" + (" (same files)." if same else " a policy can see."))
        lines.append("")
    lines += [f"Note: {n}" for n in result.notes]
    b, c, i = (result.count(x) for x in IMPACTS)
    lines.append(f"{b} breaking, {c} compatible, {i} other change{'' if i == 1 else 's'}.")
    return "\n".join(lines) + "\n"
