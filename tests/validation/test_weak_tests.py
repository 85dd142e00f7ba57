"""EK526 tests-too-weak (envkit.validation.rules.weak_tests): the mutants program run in a real
interpreter keeps the mutants that answer differently from the oracle, never an equivalent
one or one that hangs. The rule played end to end is its corpus (tests/corpus/tests-too-weak)
and the field case BGW-119."""

from __future__ import annotations

import sys

from envkit.validation.rules import weak_tests

LEAP = "def is_leap(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n"


def test_a_dropped_rule_is_kept_with_the_input_it_changes() -> None:
    mutants = weak_tests.make_mutants(sys.executable, LEAP, "is_leap", [])
    by_change = {m["change"]: m for m in mutants}
    dropped = by_change["line 2: `year % 100 != 0 or year % 400 == 0` replaced by `True`"]
    assert dropped["args"] == "(100,)"
    assert (dropped["oracle"], dropped["mutant"]) == ("False", "True")
    assert "year % 4 == 0 and True" in dropped["source"]
    assert len(mutants) <= weak_tests.MAX_MUTANTS


def test_an_equivalent_mutant_is_not_kept() -> None:
    """`[: len(xs) + 1]` cuts nothing `[: len(xs)]` keeps: no input tells them apart (and a
    number reversed raises, so that mutant is not kept either)."""
    source = "def total(xs):\n    return sum(xs[: len(xs) + 0])\n"
    assert weak_tests.make_mutants(sys.executable, source, "total", []) == []


def test_a_mutant_that_hangs_or_raises_is_not_kept() -> None:
    source = (
        "def count_to_three(n):\n    i = 0\n    while i != 3:\n        i += 1\n"
        "    return [n, i][1]\n"
    )
    changes = {
        m["change"] for m in weak_tests.make_mutants(sys.executable, source, "count_to_three", [])
    }
    assert "line 3: `i != 3` became `i == 3`" in changes  # answers 0: kept
    # `i += 2` hangs (0, 2, 4, ... never 3); `[n, i][2]` raises where the oracle answers
    assert not any("the constant 1 became 2" in c for c in changes), changes


def test_the_task_numbers_are_tried_and_a_broken_source_gives_none() -> None:
    source = "def big(n):\n    return n > 123456\n"
    mutants = weak_tests.make_mutants(sys.executable, source, "big", [123456])
    assert any(m["args"] == "(123456,)" for m in mutants), mutants
    assert weak_tests.make_mutants(sys.executable, "def big(:\n", "big", []) == []
    assert weak_tests.make_mutants(sys.executable, source, "absent", []) == []


def test_a_removed_guard_and_a_reversed_result_are_mutants_too() -> None:
    """A special case of the specification (a guard) removed, and a list returned reversed:
    the mistakes a length-only or positive-only test set lets through."""
    source = (
        "def dedupe(xs):\n    if not xs:\n        return []\n    seen, out = set(), []\n"
        "    for x in xs:\n        if x not in seen:\n            seen.add(x)\n"
        "            out.append(x)\n    return out\n"
    )
    changes = {m["change"] for m in weak_tests.make_mutants(sys.executable, source, "dedupe", [])}
    assert "line 7: `seen.add(x)` removed" in changes
    assert "line 9: `return out` returns it reversed" in changes
    assert "line 6: `x not in seen` became `x in seen`" in changes
    digits = "def digits(n):\n    n = abs(n)\n    return len(str(n))\n"
    (removed,) = [
        m
        for m in weak_tests.make_mutants(sys.executable, digits, "digits", [])
        if "removed" in m["change"]
    ]
    assert removed["change"] == "line 2: `n = abs(n)` removed"
    assert removed["args"].startswith("(-")  # only a negative number tells them apart
