"""What the reward-design probes share (envkit.validation.probing): its helpers on plain values,
then the probe_quiz environment (tests/validation/envs/probe_quiz) played clean, every probe
evaluated and none finding anything. Each defect mode giving exactly its finding is a row of
test_rules.CASES (EK513-EK522)."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest

from envkit.envdir import EnvDir
from envkit.findings import RULES, Rule
from envkit.validation import probing
from envkit.validation.options import RunOptions
from envkit.validation.rules import (
    blind_play,
    exploit_search,
    feedback_leaks,
    grader_hacks,
    load,
    processes,
    reset_options,
    return_farming,
    training_signal,
    verifier,
    weak_tests,
)
from envkit.validation.runtime import REWARD_PROBES, RuntimeTarget, run_runtime
from tests.helpers import descendants

QUIZ = Path(__file__).parent / "envs" / "probe_quiz"
#: The base checks' codes whose checks feed nothing else (played only when wanted).
OWN_ONLY = {"EK407", "EK408", "EK409", "EK510", "EK419", "EK420"}
PROBE_MODULES = (
    blind_play,
    processes,
    exploit_search,
    return_farming,
    verifier,
    load,
    reset_options,
    grader_hacks,
    feedback_leaks,
    training_signal,
    weak_tests,
)
# every probe's rule but EK521 and EK526 (probe_quiz has no code field)
PROBE_CODES = {
    rule.code
    for m in PROBE_MODULES
    if m is not processes  # plays determinism's EK411 and EK412 (the other rules: checks)
    for rule in vars(m).values()
    if isinstance(rule, Rule)
} - {grader_hacks.CODE_GRADER_HACKS.code, weak_tests.TESTS_TOO_WEAK.code}


def test_wrong_value_keeps_the_form_and_changes_the_value() -> None:
    assert probing.wrong_value("<answer>42</answer>") == "<answer>97</answer>"
    assert probing.wrong_value("Paris") == "Cnevf"
    assert probing.wrong_value(r"\boxed{7}") == r"\boxed{2}"


def test_every_probe_plays_once_from_its_rule_module() -> None:
    """The order of play lists each probe once, and each comes from a probe rule module."""
    probes = [probe for _name, probe, _codes in REWARD_PROBES]
    assert len(set(probes)) == len(probes) == 15
    assert {p.__module__ for p in probes} == {m.__name__ for m in PROBE_MODULES}


def test_every_probe_plays_for_its_own_rules() -> None:
    """``--select`` narrows what is played: each probe names the codes it plays for, and
    together a module's probes play for every rule the module registers (else selecting that
    rule alone would leave it unplayed)."""
    played_for: dict[str, set[str]] = {}
    for _name, probe, codes in REWARD_PROBES:
        assert codes and all(c in RULES for c in codes), codes
        played_for.setdefault(probe.__module__, set()).update(codes)
    for module in PROBE_MODULES:
        if module is processes:  # plays determinism's EK411 and EK412
            continue
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        own = {  # registered by the module itself, not imported into it
            r.code
            for r in vars(module).values()
            if isinstance(r, Rule) and f'register(\n    "{r.code}"' in source
        }
        assert own and own <= played_for[module.__name__], (module.__name__, own)


@pytest.mark.slow
def test_clean_probe_quiz_gives_no_finding_and_every_probe_runs(monkeypatch) -> None:
    """Clean: spacing, case, a lead-in and "73.0" are accepted, errors earn 0, a 200 KB
    answer is refused at once: no probe may find anything, and every one was evaluated. The
    quiz pays the exact answer only, so EK523 (info: no weak policy earns) is its one
    finding, as in tests/validation/test_rules.py."""
    monkeypatch.delenv("PROBE_MODE", raising=False)
    before = descendants(os.getpid())
    lines: list[str] = []
    out = run_runtime(
        RuntimeTarget(url=None, envdir=EnvDir(QUIZ), python=sys.executable),
        RunOptions(episodes=3, progress=lines.append),
    )
    time.sleep(0.2)
    assert descendants(os.getpid()) <= before, "the probes left processes behind"
    assert [f.code for f in out.findings] == ["EK523"], [(f.code, f.message) for f in out.findings]
    assert set(out.checks_run) >= PROBE_CODES | OWN_ONLY
    assert out.timings["probes"] > 0
    # progress: the probes' bound (a third of what is left of the 600 s), then each probe
    (head,) = [ln for ln in lines if ln.startswith("reward-design probes")]
    assert re.fullmatch(r"reward-design probes \(at most (\d+) s\)", head), head
    assert 100 < int(re.findall(r"\d+", head)[0]) <= 200, head
    n = len(REWARD_PROBES)
    assert [ln for ln in lines if ln.startswith("reward-design probe ")] == [
        f"reward-design probe {i}/{n}: {name}" for i, (name, _p, _c) in enumerate(REWARD_PROBES, 1)
    ]


@pytest.mark.slow
def test_select_leaves_checks_that_feed_none_of_its_codes_unplayed() -> None:
    """With one reward code wanted, the base checks that only feed their own codes (EK407,
    EK408, EK409, EK510, EK419, the capacity probe's EK420) are not played; the checks the
    wanted rule reads (the oracle, the degenerate policies) still are, and it is evaluated."""
    out = run_runtime(
        RuntimeTarget(
            url=None, envdir=EnvDir(QUIZ), python=sys.executable, wanted=lambda c: c == "EK505"
        ),
        RunOptions(episodes=3),
    )
    assert "EK505" in out.checks_run, out.checks_run
    assert not OWN_ONLY & set(out.checks_run), out.checks_run
    assert out.capacity is None
