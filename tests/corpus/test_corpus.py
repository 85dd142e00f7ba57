"""Every corpus environment played: a rule reports its defects and stays quiet on its
near-misses (tests/corpus/corpus.py says what a corpus is)."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.corpus.corpus import KNOWN_MISSES, MIN_CAUGHT, Case, cases, play

CASES = cases()
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
def test_the_rule_judges_the_case(case: Case, tmp_path: Path) -> None:
    if case.key in KNOWN_MISSES:
        pytest.xfail(KNOWN_MISSES[case.key])
    found = play(case, tmp_path, sys.executable)
    if case.kind == "defect":
        assert case.code in found, f"{case.code} missed: {case.mechanism}"
    else:
        assert case.code not in found, f"{case.code} on a near-miss: {case.mechanism}"


def test_every_corpus_is_complete_and_each_rule_finds_enough() -> None:
    by_rule: dict[str, list[Case]] = defaultdict(list)
    for case in CASES:
        by_rule[case.rule].append(case)
    for rule, group in by_rule.items():
        defects = [c for c in group if c.kind == "defect"]
        nearmisses = [c for c in group if c.kind == "nearmiss"]
        assert len(defects) >= 5 and len(nearmisses) >= 2, rule
        assert len({c.code for c in group}) == 1, rule
        missed = [c for c in defects if c.key in KNOWN_MISSES]
        assert len(defects) - len(missed) >= MIN_CAUGHT, f"{rule}: {len(missed)} known misses"
        assert not [c for c in nearmisses if c.key in KNOWN_MISSES], rule
