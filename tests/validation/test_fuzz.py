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
