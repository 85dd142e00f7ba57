"""The action generator and its helpers (no server)."""

from __future__ import annotations

import os

from envkit.validation import fuzz

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["message", "n"],
    "properties": {
        "metadata": {"type": "object"},
        "message": {"type": "string", "maxLength": 12},
        "n": {"type": "integer", "minimum": 1, "maximum": 9},
        "mode": {"$ref": "#/$defs/Mode"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "$defs": {"Mode": {"enum": ["fast", "slow"], "type": "string"}},
}


def test_generated_actions_are_valid_deterministic_and_write_nothing(tmp_path, monkeypatch):
    import jsonschema

    monkeypatch.chdir(tmp_path)
    a = fuzz.generate_actions(SCHEMA, 30, seed=1)
    assert len(a) == 30 and a == fuzz.generate_actions(SCHEMA, 30, seed=1)
    for action in a:
        assert "metadata" not in action
        jsonschema.validate(action, SCHEMA)
    assert len({str(x) for x in a}) > 10
    assert os.listdir(tmp_path) == []  # no .hypothesis directory, no database


def test_degenerate_actions():
    d = fuzz.degenerate_actions(SCHEMA, {"message": "hi", "n": 3})
    assert d["empty"] == {"message": "", "n": 1}
    assert d["maximum"]["message"] == "a" * 12 and d["maximum"]["n"] == 9
    assert d["maximum"]["mode"] == "slow"
    assert d["repeat-first"] == {"message": "hi", "n": 3}
    assert "minimum" not in d  # same as `empty` here: deduplicated


def test_invalid_actions():
    cases = dict(fuzz.invalid_actions(SCHEMA, {"message": "hi", "n": 3}))
    assert cases["required field `n` missing"] == {"message": "hi"}
    assert any(k.startswith("field `n` of the wrong type") for k in cases)
    assert cases["unknown extra field `envkit_unexpected_field`"]["envkit_unexpected_field"] == 1


def test_shrink_field_by_field():
    calls = []

    def fails(candidate):
        calls.append(candidate)
        return len(candidate.get("message", "")) >= 3

    out = fuzz.shrink(
        {"message": "hello world", "n": 7, "tags": ["x", "y"]}, fails, required={"message"}
    )
    assert out == {"message": "aaa"}
    assert len(calls) <= 60


def test_first_difference():
    assert fuzz.first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) is None
    assert fuzz.first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == ("a[1].b", 2, 3)
    assert fuzz.first_difference({"a": 1}, {}) == ("a", 1, "<missing>")
    assert fuzz.first_difference([1, 2], [1]) == ("(length)", 2, 1)
    assert fuzz.first_difference(1, 1.0) is None
    assert fuzz.first_difference(True, 1) == ("(value)", True, 1)


# a tool call: an object inside an object, each drawn through a function defined per draw
CALL = {
    "type": "object",
    "required": ["tool", "arguments"],
    "properties": {
        "tool": {"enum": ["a", "b"]},
        "arguments": {
            "type": "object",
            "properties": {
                "x": {"type": "integer"},
                "y": {"type": "object", "properties": {"z": {"type": "string"}}},
            },
        },
    },
}


def test_draws_ask_hypothesis_source_check_once_per_function_and_restore_it(monkeypatch):
    from hypothesis.strategies._internal import core

    from envkit.validation import schema_draws

    calls: list[object] = []
    own = core.is_first_param_referenced_in_function

    def counting(f: object) -> bool:
        calls.append(getattr(f, "__code__", None))
        return own(f)

    monkeypatch.setattr(core, "is_first_param_referenced_in_function", counting)
    drawn = fuzz.generate_actions(CALL, 30, seed=1)
    assert core.is_first_param_referenced_in_function is counting  # put back after the draws
    assert calls and len(calls) == len(set(calls))  # each function's source parsed once
    # without the remembered answers the source is parsed again and again, and the seed
    # draws the same actions
    calls.clear()
    monkeypatch.setattr(schema_draws, "_Referenced", lambda check: check)
    assert drawn == fuzz.generate_actions(CALL, 30, seed=1)
    assert len(calls) > 2 * len(set(calls))
