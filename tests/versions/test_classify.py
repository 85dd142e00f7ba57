"""The classification table of docs/versions.md, one row per test, on hand-written schemas."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from envkit.versions.diff import BREAKING, COMPATIBLE, INFO, compare_models, diff
from envkit.versions.snapshot import EnvSnapshot

ACTION: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "guess": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Your guess."},
        "mode": {"enum": ["fast", "slow"], "type": "string", "default": "fast"},
    },
    "required": ["guess"],
}


def _with(**props: Any) -> dict[str, Any]:
    out = copy.deepcopy(ACTION)
    for name, schema in props.items():
        if schema is None:
            out["properties"].pop(name)
        else:
            out["properties"][name] = schema
    return out


def _one(area: str, old: dict, new: dict, *, writes: bool) -> tuple[str, str, str | None]:
    changes = compare_models(area, old, new, writes=writes)
    assert len(changes) == 1, changes
    c = changes[0]
    return c.change, c.impact, c.field


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (_with(guess=None), ("removed", BREAKING, "guess")),
        (_with(guess={"type": "string"}), ("type", BREAKING, "guess")),
        (_with(guess={"type": ["integer", "null"], "minimum": 1, "maximum": 100}), None),
        (_with(guess={"type": "integer", "minimum": 1, "maximum": 10}), ("constraint", BREAKING, "guess")),
        (_with(guess={"type": "integer", "minimum": 0, "maximum": 100}), ("constraint", COMPATIBLE, "guess")),
        (_with(mode={"enum": ["fast"], "type": "string"}), ("constraint", BREAKING, "mode")),
        (_with(hint={"type": "string", "default": ""}), ("added", COMPATIBLE, "hint")),
        (_with(guess={"type": "integer", "minimum": 1, "maximum": 100, "description": "New."}), ("description", COMPATIBLE, "guess")),
    ],
)  # fmt: skip
def test_action_changes(new: dict, expected: tuple | None) -> None:
    if expected is None:  # integer -> integer|null: every old action is still accepted
        changes = compare_models("action", ACTION, new, writes=True)
        assert [(c.change, c.impact) for c in changes] == [("type", COMPATIBLE)]
        return
    assert _one("action", ACTION, new, writes=True) == expected


def test_action_new_required_and_newly_required_fields_break() -> None:
    new = _with(hint={"type": "string"})
    new["required"] = ["guess", "hint"]
    assert _one("action", ACTION, new, writes=True) == ("added", BREAKING, "hint")
    new = _with()
    new["required"] = ["guess", "mode"]
    assert _one("action", ACTION, new, writes=True) == ("required", BREAKING, "mode")


def test_a_rename_is_one_change_naming_both_fields() -> None:
    new = copy.deepcopy(ACTION)
    new["properties"]["number"] = new["properties"].pop("guess")
    new["required"] = ["number"]
    changes = compare_models("action", ACTION, new, writes=True)
    assert [(c.change, c.impact, c.old, c.new) for c in changes] == [
        ("renamed", BREAKING, "guess", "number")
    ]


def test_extra_fields_newly_forbidden_break_an_action() -> None:
    old = _with()
    old["additionalProperties"] = True
    assert _one("action", old, ACTION, writes=True)[:2] == ("extra", BREAKING)
    assert _one("action", ACTION, old, writes=True)[:2] == ("extra", COMPATIBLE)


def test_observations_are_judged_the_other_way() -> None:
    # a policy reads observations: new fields are fine, a wider range or a lost field is not
    assert _one("observation", ACTION, _with(hint={"type": "string"}), writes=False)[:2] == (
        "added",
        COMPATIBLE,
    )
    assert _one("observation", ACTION, _with(guess=None), writes=False)[:2] == (
        "removed",
        BREAKING,
    )
    wider = _with(guess={"type": "integer", "minimum": 0, "maximum": 100})
    assert _one("observation", ACTION, wider, writes=False)[:2] == ("constraint", BREAKING)
    narrower = _with(guess={"type": "integer", "minimum": 1, "maximum": 10})
    assert _one("observation", ACTION, narrower, writes=False)[:2] == ("constraint", COMPATIBLE)


def _snap(**kw: Any) -> EnvSnapshot:
    base = {
        "label": "x",
        "kind": "path",
        "schemas": {"action": ACTION, "observation": ACTION, "state": ACTION},
        "reward_range": (0.0, 1.0),
        "reset_options": {"level": ["easy", "hard"]},
        "manifest": {"name": "x", "validation": {"reward": {"range": [0.0, 1.0]}}},
    }
    return EnvSnapshot(**(base | kw))


def test_state_reward_reset_and_manifest() -> None:
    new = _snap(
        schemas={"action": ACTION, "observation": ACTION, "state": _with(guess=None)},
        reward_range=(0.0, 10.0),
        reset_options={"level": ["easy"]},
        manifest={"name": "y", "validation": {"reward": {"range": [0.0, 10.0]}}},
    )
    got = {(c.area, c.change, c.impact) for c in diff(_snap(), new).changes}
    assert got == {
        ("state", "removed", COMPATIBLE),  # a policy never sees the state
        ("reward", "changed", BREAKING),
        ("reset", "constraint", BREAKING),
        ("manifest", "changed", INFO),  # `name`; the reward range is reported once, above
    }


def test_identical_snapshots_have_no_changes() -> None:
    result = diff(_snap(), _snap())
    assert result.changes == [] and not result.breaking
    assert result.to_dict()["summary"] == {BREAKING: 0, COMPATIBLE: 0, INFO: 0}


def test_an_enum_without_a_type_has_the_type_of_its_values() -> None:
    old = _with(mode={"enum": ["fast", "slow"]})
    assert compare_models("action", old, ACTION, writes=True) == []  # `type: string` added
