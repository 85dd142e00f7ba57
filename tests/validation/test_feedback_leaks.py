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


def test_a_new_one_letter_field_is_revealed_though_every_option_holds_the_letter() -> None:
    before = [{"choices": ["A) dry", "B) quick"], "correct_choice": ""}]
    after = {"choices": ["A) dry", "B) quick"], "correct_choice": "B", "feedback": "Wrong."}
    assert feedback_leaks.revealed(before, after, ["A"])[0] == "B"


def test_quoted_tests_become_a_lookup_table_that_answers_them() -> None:
    text = (
        "3/5 hidden tests passed.\n"
        "solve([3, -1]) returned None, expected 10\n"
        "solve([]): expected 0, got None.\n"
        "assert solve([2], 'x') == [4, 'x']\n"
        "solve(oops) returned 1, expected 2"  # not literals: left out
    )
    tests = feedback_leaks.quoted_tests(text, "solve")
    assert tests == [(([3, -1],), 10), (([],), 0), (([2], "x"), [4, "x"])]
    namespace: dict = {}
    exec(feedback_leaks.lookup_source("solve", tests), namespace)
    assert namespace["solve"]([3, -1]) == 10 and namespace["solve"]([]) == 0
    assert namespace["solve"]([2], "x") == [4, "x"] and namespace["solve"]([9]) is None
