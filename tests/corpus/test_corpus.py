"""Every corpus environment played: a rule reports its defects and stays quiet on its
near-misses (tests/corpus/corpus.py says what a corpus is).

The cases this session selects play once, several at a time (:func:`play_all`), in one
session fixture on one xdist worker (group ``corpus``); each test then judges its case. A
case whose schedule the time cut short is played again with a larger budget, and fails as
"timed out" when it is cut short again: never as a miss (:func:`verdict`)."""

from __future__ import annotations

import sys
from collections import defaultdict

import pytest

from tests.corpus.corpus import (
    BELOW_TARGET,
    KNOWN_MISSES,
    KNOWN_NOISE,
    MIN_CAUGHT,
    REPORTED_AS,
    RETRY_TIMEOUT_S,
    Case,
    Played,
    cases,
    play_all,
    timed_out_message,
    verdict,
)

CASES = cases()
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("corpus"), pytest.mark.timeout(3600)]


@pytest.fixture(scope="session")
def corpus_results(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Played | BaseException]:
    """What each selected case gave (or what playing it raised)."""
    wanted = {
        item.callspec.params["case"].key
        for item in request.session.items
        if item.originalname == "test_the_rule_judges_the_case" and hasattr(item, "callspec")
    }
    chosen = [c for c in CASES if c.key in wanted]
    work = tmp_path_factory.mktemp("corpus")
    with pytest.MonkeyPatch.context() as mp:  # servers' caches off the real HOME
        mp.setenv("HOME", str(tmp_path_factory.mktemp("corpus-home")))
        return {case.key: found for case, found, _s in play_all(chosen, work, sys.executable)}


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
def test_the_rule_judges_the_case(
    case: Case, corpus_results: dict[str, Played | BaseException]
) -> None:
    played = corpus_results[case.key]
    if isinstance(played, BaseException):
        raise played
    said = verdict(case, played)
    if said == "timed out":  # no verdict: not a miss, not a catch
        pytest.fail(timed_out_message(case.key, RETRY_TIMEOUT_S, played.out_of_time))
    if case.key in REPORTED_AS:  # by a rule its own names for it (or, some runs, itself)
        codes, why = REPORTED_AS[case.key]
        assert said in ("found", "instead"), f"{case.key} is not reported as {codes} ({why})"
        return
    if case.key in KNOWN_NOISE:  # strict: a near-miss that is quiet now must leave the list
        assert said == "noise", f"{case.key} is quiet now: remove it from KNOWN_NOISE"
        pytest.xfail(KNOWN_NOISE[case.key])
    if case.key in KNOWN_MISSES:  # strict: a miss that is caught now must leave the list
        assert said == "missed", f"{case.key} is caught now: remove it from KNOWN_MISSES"
        pytest.xfail(KNOWN_MISSES[case.key])
    if case.kind == "defect":
        assert said == "found", f"{case.code} missed: {case.mechanism}"
    else:
        assert said == "quiet", f"{case.code} on a near-miss: {case.mechanism}"


BY_RULE: dict[str, list[Case]] = defaultdict(list)
for _case in CASES:
    BY_RULE[_case.rule].append(_case)


@pytest.mark.parametrize("rule", sorted(BY_RULE))
def test_each_corpus_is_complete_and_its_rule_finds_enough(rule: str) -> None:
    """A rule meets the target with its own code: a defect reported instead by a neighbour
    (:data:`REPORTED_AS`) is counted apart, not as the rule's catch."""
    group = BY_RULE[rule]
    defects = [c for c in group if c.kind == "defect"]
    nearmisses = [c for c in group if c.kind == "nearmiss"]
    assert len(defects) >= 5 and len(nearmisses) >= 2, rule
    assert len({c.code for c in group}) == 1, rule
    assert not [c for c in nearmisses if c.key in KNOWN_MISSES or c.key in REPORTED_AS], (
        "a near-miss must stay quiet"
    )
    assert not [c for c in defects if c.key in KNOWN_MISSES and c.key in REPORTED_AS]
    own = len([c for c in defects if c.key not in KNOWN_MISSES and c.key not in REPORTED_AS])
    instead = len([c for c in defects if c.key in REPORTED_AS])
    figures = f"{rule}: finds {own} of {len(defects)} itself, {instead} reported instead"
    assert own + instead >= MIN_CAUGHT, figures
    if rule in BELOW_TARGET:
        assert own < MIN_CAUGHT, f"{figures}: remove it from BELOW_TARGET"
        pytest.xfail(f"{figures}: {BELOW_TARGET[rule]}")
    assert own >= MIN_CAUGHT, figures
