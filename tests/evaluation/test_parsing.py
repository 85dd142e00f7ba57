"""Model reply -> action, and the system prompt derived from a real server's /schema."""

import httpx
import pytest

from envkit.evaluation.parsing import ActionParseError, parse_action, single_string_field
from envkit.evaluation.prompts import observation_message, system_prompt

ECHO = {
    "type": "object",
    "properties": {"metadata": {"type": "object"}, "message": {"type": "string", "maxLength": 200}},
    "required": ["message"],
}
MOVE = {
    "type": "object",
    "properties": {
        "metadata": {"type": "object"},
        "x": {"type": "integer"},
        "y": {"type": "integer"},
    },
}


@pytest.mark.parametrize(
    "reply, action",
    [
        ('Sure.\n```json\n{"x": 1, "y": 2}\n```\nDone', {"x": 1, "y": 2}),
        ('```\n{"x": 3, "y": 4}\n```', {"x": 3, "y": 4}),
        ('I pick {"x": 5, "y": 6} because {"x": 0}', {"x": 5, "y": 6}),
        ('{"action": {"x": 7, "y": 8}}', {"x": 7, "y": 8}),
        ('<think>maybe {"x": 0, "y": 0}?</think>{"x": 9, "y": 9}', {"x": 9, "y": 9}),
        ('{not json} then {"x": 1}', {"x": 1}),
    ],
)
def test_json_replies(reply, action):
    assert parse_action(reply, MOVE) == action


def test_single_string_field_fallback():
    assert single_string_field(ECHO) == "message"
    assert single_string_field(MOVE) is None
    assert parse_action("  amber basil cedar \n", ECHO) == {"message": "amber basil cedar"}
    assert parse_action("```\namber basil\n```", ECHO) == {"message": "amber basil"}
    assert parse_action('```json\n{"message": "x"}\n```', ECHO) == {"message": "x"}


@pytest.mark.parametrize(
    "reply, schema",
    [("", ECHO), (None, ECHO), ("<think>hm</think>", ECHO), ("go left", MOVE), ("[1, 2]", MOVE)],
)
def test_unparseable(reply, schema):
    with pytest.raises(ActionParseError):
        parse_action(reply, schema)


def test_system_prompt_from_real_schema(echo_server):
    schemas = httpx.get(f"{echo_server.url}/schema", timeout=10).json()
    meta = httpx.get(f"{echo_server.url}/metadata", timeout=10).json()
    prompt = system_prompt(schemas, meta)
    assert '"message"' in prompt and '"target"' in prompt
    assert '"metadata"' not in prompt  # openenv-core's bookkeeping field is not for the model
    assert "```json" in prompt and '{"message": "..."}' in prompt
    msg = observation_message({"target": "a b"}, reward=None, step=0)
    assert msg.startswith("The episode starts.") and '"target": "a b"' in msg
    assert "Reward: 0.5" in observation_message({}, reward=0.5, step=2)
    assert "not a valid action (no JSON)" in observation_message(
        {}, reward=None, step=1, error="no JSON"
    )
