"""envkit.blind.shapes and envkit.blind.slots: the tools an observation lists, the action
schema refined with each tool's input schema, and the answer slots of an action."""

from __future__ import annotations

import jsonschema
import pytest

from envkit.blind import shapes, slots
from envkit.validation.fuzz import generate_actions

SEAT = {
    "type": "object",
    "properties": {
        "row": {"type": "integer", "minimum": 1, "maximum": 30},
        "letter": {"enum": ["A", "B", "C"]},
    },
    "required": ["row", "letter"],
    "additionalProperties": False,
}
BOOK = {
    "type": "object",
    "$defs": {"Seat": SEAT},
    "properties": {
        "seat": {"$ref": "#/$defs/Seat"},
        "passenger": {"type": "string", "minLength": 1, "maxLength": 20},
    },
    "required": ["seat", "passenger"],
}
CANCEL = {  # its own `Seat`, of another type: the two must not collide once merged
    "type": "object",
    "$defs": {"Seat": {"type": "string", "enum": ["1A", "2B"]}},
    "properties": {"seat": {"$ref": "#/$defs/Seat"}},
    "required": ["seat"],
}
# OpenEnv's /schema of an action like CallToolAction, with the names as a Literal
ACTION_SCHEMA = {
    "title": "FlightsAction",
    "type": "object",
    "properties": {
        "metadata": {"type": "object", "additionalProperties": True},
        "tool_name": {"type": "string", "enum": ["book", "cancel", "submit_answer"]},
        "arguments": {"type": "object", "additionalProperties": True},
    },
    "required": ["tool_name"],
    "additionalProperties": False,
}
SUBMIT = {
    "type": "object",
    "properties": {"amount": {"type": "number", "minimum": 0}},
    "required": ["amount"],
}


def test_tools_from_the_templates_tools_field() -> None:
    obs = {
        "task": "Book seat 3B for Ada.",
        "tools": [
            {"name": "book", "description": "Book a seat.", "input_schema": BOOK},
            {"name": "cancel", "input_schema": CANCEL},
            {"name": "book", "input_schema": CANCEL},  # a repeated name: the first one kept
            {"description": "no name"},
        ],
    }
    tools = shapes.tools_from_observation(obs)
    assert [(t.name, t.description) for t in tools] == [("book", "Book a seat."), ("cancel", "")]
    assert tools[0].schema is BOOK


def test_tools_from_mcp_and_openai_forms() -> None:
    mcp = {"metadata": {"tools": [{"name": "cancel", "inputSchema": CANCEL}]}}
    assert [t.schema for t in shapes.tools_from_observation(mcp)] == [CANCEL]
    openai = {
        "tools": [
            {"type": "function", "function": {"name": "book", "parameters": BOOK}},
            {"type": "function", "function": {"name": "ping"}},
        ]
    }
    tools = shapes.tools_from_observation(openai)
    assert [t.name for t in tools] == ["book", "ping"]
    assert tools[1].schema == {"type": "object"}  # no schema given: any object
    # a list of plain records is not a tool list
    assert shapes.tools_from_observation({"rows": [{"name": "x", "age": 3}]}) == []
    assert shapes.tools_from_observation(["not", "a", "dict"]) == []


def test_call_shape_of_a_tool_call_action() -> None:
    shape = shapes.call_shape(ACTION_SCHEMA)
    assert shape == shapes.CallShape("tool_name", "arguments", ("book", "cancel", "submit_answer"))
    plain = {"type": "object", "properties": {"answer": {"type": "string"}}}
    assert shapes.call_shape(plain) is None


def test_refined_draws_always_carry_valid_arguments() -> None:
    tools = [
        shapes.Tool("book", BOOK),
        shapes.Tool("cancel", CANCEL),
        shapes.Tool("submit_answer", SUBMIT),
        shapes.Tool("ping", {"type": "object"}),  # not in the name enum: the server refuses it
    ]
    refined = shapes.refine(ACTION_SCHEMA, tools)
    assert refined is not None
    assert len(refined["anyOf"]) == 3
    assert ACTION_SCHEMA["properties"]["arguments"] == {
        "type": "object",
        "additionalProperties": True,
    }  # not modified
    by_name = {t.name: t.schema for t in tools}
    draws = generate_actions(refined, 60, seed=7)
    assert draws
    seen = set()
    for action in draws:
        name = action["tool_name"]
        seen.add(name)
        assert name in ("book", "cancel", "submit_answer")
        jsonschema.validate(action["arguments"], by_name[name])  # raises when invalid
        jsonschema.validate(action, ACTION_SCHEMA)  # still an action the server accepts
    assert seen == {"book", "cancel", "submit_answer"}


def test_refine_refuses_what_is_no_tool_call() -> None:
    assert shapes.refine(ACTION_SCHEMA, []) is None
    assert shapes.refine(ACTION_SCHEMA, [shapes.Tool("ping", {"type": "object"})]) is None
    plain = {"type": "object", "properties": {"answer": {"type": "string"}}}
    assert shapes.refine(plain, [shapes.Tool("book", BOOK)]) is None


def test_tool_errors_and_calls() -> None:
    assert shapes.tool_error({"error": "  unknown item 'x'  "}) == "unknown item 'x'"
    assert shapes.tool_error({"error": {"message": "bad arguments"}}) == "bad arguments"
    assert shapes.tool_error({"error": ""}) is None
    assert shapes.tool_error({"result": "4.5"}) is None
    assert shapes.is_tool_call({"tool_name": "book", "arguments": {}})
    assert not shapes.is_tool_call({"answer": "Paris"})
    shape = shapes.call_shape(ACTION_SCHEMA)
    assert shapes.tool_of({"tool_name": "cancel", "arguments": {}}, shape) == "cancel"
    assert shapes.tool_of({"tool_name": "cancel"}, None) is None


# -- slots ---------------------------------------------------------------------------------------
def test_slots_of_a_tool_call() -> None:
    refined = shapes.refine(ACTION_SCHEMA, [shapes.Tool("book", BOOK)])
    action = {
        "tool_name": "book",
        "arguments": {"seat": {"row": 3, "letter": "B"}, "passenger": "Ada"},
        "metadata": {"note": "not an answer"},
    }
    found = slots.find(action, refined)
    # the tool name (a const) and the seat letter (an enum) are no slots; strings first
    assert [(s.where, s.kind, s.value) for s in found] == [
        ("arguments.passenger", "string", "Ada"),
        ("arguments.seat.row", "integer", 3),
    ]
    passenger, row = found
    assert passenger.node["maxLength"] == 20
    assert row.node == {"type": "integer", "minimum": 1, "maximum": 30}
    filled = slots.fill(action, row, 12)
    assert filled["arguments"]["seat"] == {"row": 12, "letter": "B"}
    assert action["arguments"]["seat"]["row"] == 3  # a copy: the action is unchanged
    assert slots.fits(12, row) and not slots.fits(31, row) and not slots.fits(0, row)
    assert slots.fits("Grace", passenger) and not slots.fits("x" * 21, passenger)
    assert not slots.fits("", passenger)  # minLength 1


def test_a_plain_action_with_an_enum_field() -> None:
    schema = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "enum": ["move", "answer"]},
            "mode": {"const": "final"},
            "answer": {"type": "string"},
            "confidence": {"type": "number", "exclusiveMaximum": 1},
        },
    }
    action = {"command": "answer", "mode": "final", "answer": "Paris", "confidence": 0.5}
    found = slots.find(action, schema)
    assert [s.where for s in found] == ["answer", "confidence"]
    assert not slots.fits(1, found[1]) and slots.fits(0.99, found[1])
    # without a schema every string and number leaf is a slot (a bool is none)
    loose = slots.find({"answer": "x", "n": 2, "ok": True, "xs": ["a"]}, None)
    assert [s.where for s in loose] == ["answer", "xs", "n"]


def test_a_list_of_strings_is_one_slot() -> None:
    """An answer with many parts is played as a whole: a text value is its one item, a
    list of words its items; a list of numbers is played item by item."""
    schema = {
        "type": "object",
        "properties": {
            "words": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "count": {"type": "integer"},
            "scores": {"type": "array", "items": {"type": "number"}},
        },
    }
    action = {"words": ["level", "noon"], "count": 2, "scores": [0.5]}
    found = slots.find(action, schema)
    assert [(s.where, s.kind) for s in found] == [
        ("words", "array"),
        ("count", "integer"),
        ("scores.0", "number"),
    ]
    words = found[0]
    assert slots.coerce("kayak", words) == ["kayak"]
    assert slots.coerce(["a", "b"], words) == ["a", "b"]
    assert slots.coerce([1, 2], words) is None
    assert slots.coerce(["a"], found[1]) is None  # a list fits only a list slot
    assert slots.fits(["a", "b", "c"], words) and not slots.fits(["a"] * 4, words)
    assert slots.fill(action, words, ["x"])["words"] == ["x"]


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        (42, "string", "42"),
        (0.5, "string", "0.5"),
        (True, "string", "true"),
        ("Paris", "string", "Paris"),
        (["x"], "string", None),
        (" 7 ", "integer", 7),
        ("7.5", "integer", None),
        (7.0, "integer", 7),
        ("1e3", "number", 1000.0),
        ("Paris", "number", None),
        (float("nan"), "number", None),
        ("inf", "number", None),
        (True, "number", None),
        (None, "number", None),
        # integers beyond a float's range: a long digit string or a big int is still a number
        (10**400, "integer", 10**400),
        ("9" * 400, "integer", int("9" * 400)),
        (10**400, "string", "1" + "0" * 400),
        ("1e400", "number", None),
    ],
)
def test_coerce(value: object, kind: str, expected: object) -> None:
    slot = slots.Slot(("answer",), kind, "", {})
    out = slots.coerce(value, slot)
    assert out == expected and type(out) is type(expected)
