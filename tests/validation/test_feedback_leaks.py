"""EK522 feedback leaks the answer (envkit.validation.rules.feedback_leaks): the texts an
observation reveals, on plain values."""

from __future__ import annotations

from envkit.validation.rules import feedback_leaks


def test_revealed_text_leaves_out_what_was_shown_or_sent() -> None:
    before = [{"question": "What is 24 + 49?", "feedback": ""}]
    after = {"feedback": "Wrong: the expected answer was 73.", "log": ["28"]}
    got = feedback_leaks.revealed(before, after, ["28"])
    assert got[0] == "73" and "28" not in got and "24" not in got
    assert feedback_leaks.revealed(before, {"feedback": "What is 24 + 49?"}, []) == []
    quoted = feedback_leaks.revealed([], {"feedback": "Expected output: 'abc'; got 4.5"}, [])
    assert "abc" in quoted and "4.5" in quoted
