"""What the EK410 and EK508 messages say, from the evidence their checks collect: the action
that raised printed so that every character of it shows, and what the reward after ``done``
must be."""

from __future__ import annotations

import json

from envkit.validation.rules.episodes import raises_message, visible_json
from envkit.validation.rules.integrity import after_done_message


def test_ek410_names_the_action_with_its_control_characters_escaped() -> None:
    action = {"message": "a\x00b\nc\x84d\x7fe\u200bf\U000dedbc"}
    msg = raises_message(action, 3, "ValueError: bad byte", 2)
    shown = msg.split("`step(", 1)[1].split(")` after", 1)[0]
    # nothing a terminal drops: every character printable, the action parses back whole
    assert shown.isprintable(), repr(shown)
    assert json.loads(shown) == action
    assert "\\u0000" in shown and "\\n" in shown and "\\u0084" in shown and "\\u007f" in shown
    assert "`reset(seed=3)`" in msg and "'ValueError: bad byte'" in msg and "2 fuzzed" in msg


def test_visible_json_cuts_between_escapes() -> None:
    text = visible_json({"m": "\x84" * 100}, limit=30)
    assert text.endswith("…") and len(text) <= 30
    assert text[:-1].endswith("\\u0084")


def _evidence(reward: float) -> dict:
    return {
        "policy": "oracle",
        "seed": 0,
        "episode_actions": [{"answer": "42"}],
        "sent": {"answer": "x"},
        "what": "a fuzzed action",
        "reward": reward,
    }


def test_ek508_under_a_negative_range_says_the_reward_must_be_its_low_end() -> None:
    sends = [({"answer": "42"}, 0.0), ({"answer": "x"}, 0.0), ({"answer": ""}, 0.0)]
    msg = after_done_message(_evidence(0.0), -1.0, paid=3, probed=3, after_rewards=sends)
    assert "must be the low end of `validation.reward.range` (-1)" in msg
    assert "or `step` must refuse" in msg and "0 is not neutral" in msg
    # a constant after done is not a reward computed before checking done
    assert "computes the reward before" not in msg
    assert "the same reward whatever the action (3 steps, 0.0)" in msg


def test_ek508_keeps_the_guess_when_the_reward_after_done_follows_the_action() -> None:
    sends = [({"answer": "42"}, 1.0), ({"answer": "x"}, 0.0)]
    msg = after_done_message(_evidence(1.0), 0.0, paid=1, probed=2, after_rewards=sends)
    assert "must be the low end of `validation.reward.range` (0)" in msg
    assert "computes the reward before checking" in msg and "not neutral" not in msg
    # one action sent again and again proves no constant
    same = [({"answer": "42"}, 1.0), ({"answer": "42"}, 1.0)]
    msg = after_done_message(_evidence(1.0), 0.0, paid=2, probed=2, after_rewards=same)
    assert "computes the reward before checking" in msg
