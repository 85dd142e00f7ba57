"""The field corpus played (tests/corpus/field.py says what it is): envkit reports each defect
drawn from an external failure class and leaves each near-miss without a runtime error.

The layout checks read files only (fast tier); the selected cases play several at a time, in
one session fixture on the corpus tier's xdist worker (group ``corpus``), and a case the time
cut short plays again alone (:func:`tests.corpus.field.play_all`)."""

from __future__ import annotations

import os
import sys

import pytest

from envkit.findings import RULES
from envkit.validation import rules as _registered  # noqa: F401 - registers every rule
from tests.corpus.corpus import timed_out_message
from tests.corpus.field import (
    KNOWN_MISSES,
    KNOWN_NOISE,
    RETRY_TIMEOUT_S,
    FieldCase,
    Played,
    field_cases,
    play_all,
    problems,
    verdict,
)

CASES = field_cases()
_PLAYED = [pytest.mark.slow, pytest.mark.xdist_group("corpus"), pytest.mark.timeout(3600)]


@pytest.fixture(scope="session")
def field_results(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Played | BaseException]:
    """What envkit reports on each selected case (or what playing it raised)."""
    wanted = {
        item.callspec.params["case"].key
        for item in request.session.items
        if item.originalname == "test_envkit_judges_the_field_case" and hasattr(item, "callspec")
    }
    chosen = [c for c in CASES if c.key in wanted]
    work = tmp_path_factory.mktemp("field")
    with pytest.MonkeyPatch.context() as mp:  # servers' caches off the real HOME
        mp.setenv("HOME", str(tmp_path_factory.mktemp("field-home")))
        return {case.key: found for case, found, _s in play_all(chosen, work, sys.executable)}


#: Playing the field corpus is a tier of its own: every case runs every runtime rule (about
#: 25-60 s a case on a loaded 2-core machine, some 60 cases), more than the whole suite's
#: budget. `ENVKIT_FIELD=1 scripts/test tests/corpus/test_field.py` plays it; bench/field.py
#: prints its figures.
PLAY_FIELD = os.environ.get("ENVKIT_FIELD") == "1"


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
@pytest.mark.slow
@pytest.mark.xdist_group("corpus")
@pytest.mark.timeout(3600)
@pytest.mark.skipif(not PLAY_FIELD, reason="the field corpus tier: ENVKIT_FIELD=1 plays it")
def test_envkit_judges_the_field_case(
    case: FieldCase, field_results: dict[str, Played | BaseException]
) -> None:
    played = field_results[case.key]
    if isinstance(played, BaseException):
        raise played
    said = verdict(case, played)
    if said == "timed out":  # no verdict: not a miss, not a catch
        pytest.fail(timed_out_message(case.key, RETRY_TIMEOUT_S, played.out_of_time))
    if case.key in KNOWN_NOISE:  # strict: a near-miss that is quiet now must leave the list
        assert said == "noise", f"{case.key} is quiet now: remove it from KNOWN_NOISE"
        pytest.xfail(KNOWN_NOISE[case.key])
    if case.key in KNOWN_MISSES:  # strict: a miss that is found now must leave the list
        assert said != "found", f"{case.key} is found now: remove it from KNOWN_MISSES"
        pytest.xfail(KNOWN_MISSES[case.key])
    if case.kind == "defect":
        want = case.code or "a finding at warning or above"
        assert said == "found", (
            f"{case.external} missed ({want}; got {sorted(played.codes) or 'nothing'}; "
            f"{played.tries} play(s)): "
            f"{case.mechanism}"
        )
    else:
        assert said == "quiet", (
            f"runtime error on a near-miss of {case.external} ({sorted(played.errors)}): "
            f"{case.mechanism}"
        )


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
def test_the_field_case_is_well_formed(case: FieldCase) -> None:
    assert problems(case) == []
    if case.code:
        assert case.code in RULES, f"{case.key}: {case.code} is not a registered rule"


def test_the_known_lists_name_field_cases() -> None:
    by_key = {c.key: c for c in CASES}
    assert set(KNOWN_MISSES) <= set(by_key), set(KNOWN_MISSES) - set(by_key)
    assert set(KNOWN_NOISE) <= set(by_key), set(KNOWN_NOISE) - set(by_key)
    assert all(by_key[k].kind == "defect" for k in KNOWN_MISSES), "KNOWN_MISSES is defects"
    assert all(by_key[k].kind == "nearmiss" for k in KNOWN_NOISE), "KNOWN_NOISE is near-misses"


def test_the_reader_takes_the_documented_layout(tmp_path) -> None:
    """A case as tests/corpus/field.py documents it reads back with its fields; a malformed
    one is reported, not skipped."""
    good = tmp_path / "grader-logic" / "defect_substring"
    bad = tmp_path / "grader-logic" / "nearmiss_oops"
    for case in (good, bad):
        (case / "server").mkdir(parents=True)
        for part in ("openenv.yaml", "server/__init__.py", "server/app.py"):
            (case / part).write_text("")
    (good / "case.toml").write_text(
        'kind = "defect"\nexternal = "BGW-119"\nsource = "https://example.org/x"\n'
        'mechanism = "substring match"\ncode = "EK505"\n'
    )
    (bad / "case.toml").write_text('kind = "defect"\nexternal = "nope"\nsource = "x"\n')
    got = {c.name: c for c in field_cases(tmp_path)}
    assert got["defect_substring"].external == "BGW-119"
    assert got["defect_substring"].code == "EK505"
    assert problems(got["defect_substring"]) == []
    assert len(problems(got["nearmiss_oops"])) == 4  # folder/kind, external, source, mechanism
    played = Played({"EK505": "warning", "EK401": "info"})
    assert verdict(got["defect_substring"], played) == "found"
    assert verdict(got["defect_substring"], Played({"EK509": "error"})) == "other"
    assert verdict(got["defect_substring"], Played({"EK401": "info"})) == "missed"
