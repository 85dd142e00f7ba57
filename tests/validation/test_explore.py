"""The exploring policy (issue #13 item 2): what it reads from the action schema and the
observation, and that it is reproducible. The episodes it ends are tested over the wire in
tests/validation (realworld_corridor)."""

from __future__ import annotations

from envkit.validation.explore import ActionSpace, Explorer

INT_ACTION = {
    "type": "object",
    "required": ["column"],
    "properties": {"column": {"type": "integer"}, "metadata": {"type": "object"}},
}
STR_ACTION = {"type": "object", "required": ["move"], "properties": {"move": {"type": "string"}}}
ENUM_ACTION = {
    "type": "object",
    "required": ["action"],
    "$defs": {"Move": {"enum": ["UP", "DOWN"], "type": "string"}},
    "properties": {"action": {"$ref": "#/$defs/Move"}},
}


def test_legal_actions_listed_in_the_observation_fill_the_field_of_their_type() -> None:
    space = ActionSpace(INT_ACTION, {"column": 99}, [{"column": 99}])
    obs = {"board": [[0, 1]], "legal_actions": [2, 5], "metadata": {}}
    assert space.choices(obs) == [{"column": 2}, {"column": 5}]
    # inside the observation's metadata too, and strings for a string field
    space = ActionSpace(STR_ACTION, {"move": ""}, [])
    assert space.legal({"metadata": {"valid_moves": ["e2e4"]}}) == [{"move": "e2e4"}]
    # a list of the wrong type, or not named as legal actions, is not read
    assert space.legal({"legal_moves": [1, 2]}) == []
    assert space.legal({"history": ["e2e4"]}) == []


def test_without_a_list_the_schema_enumeration_then_the_fuzzed_actions_are_played() -> None:
    space = ActionSpace(ENUM_ACTION, {"action": "UP"}, [])
    assert space.choices({"x": 0}) == [{"action": "UP"}, {"action": "DOWN"}]
    bounded = {
        "type": "object",
        "required": ["k"],
        "properties": {"k": {"type": "integer", "minimum": 1, "maximum": 3}},
    }
    assert ActionSpace(bounded, {"k": 1}, []).enumerated == [{"k": 1}, {"k": 2}, {"k": 3}]
    fuzzed = [{"move": "a"}, {"move": "b"}, {"move": "a"}]
    assert ActionSpace(STR_ACTION, fuzzed[0], fuzzed).choices({}) == fuzzed[:2]


def test_the_explorer_prefers_what_it_tried_least_and_repeats_with_its_seed() -> None:
    space = ActionSpace(ENUM_ACTION, {"action": "UP"}, [])
    obs = {"x": 0, "metadata": {"step": 1}}
    first = Explorer(space, 7)
    picks = [first(obs, i)["action"] for i in range(4)]
    assert sorted(picks[:2]) == ["DOWN", "UP"] and sorted(picks[2:]) == ["DOWN", "UP"]
    again = Explorer(space, 7)
    assert [again(obs, i)["action"] for i in range(4)] == picks


def test_only_keys_naming_allowed_actions_are_read() -> None:
    """repl_env lists tool names under `available_tools`: they are not actions (issue #13)."""
    space = ActionSpace(STR_ACTION, {"move": ""}, [])
    assert space.legal({"available_tools": ["rlm_query_batched"]}) == []
    assert space.legal({"validMoves": ["a1"]}) == [{"move": "a1"}]
    assert space.legal({"possible_actions": ["b2"]}) == [{"move": "b2"}]
