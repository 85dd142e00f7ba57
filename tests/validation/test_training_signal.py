"""EK523 no-training-signal: the weak policies' episodes grouped by seed, as GRPO groups the
rollouts of one prompt (envkit/validation/rules/training_signal.py).

The verdict is judged on recorded episodes (no server); a real sparse environment and a
template show it over the wire (slow)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from envkit.envdir import EnvDir
from envkit.validation.engine import Episode, ServerPlayer, Settings
from envkit.validation.options import RunOptions
from envkit.validation.rules import integrity, reward
from envkit.validation.rules.training_signal import (
    NO_TRAINING_SIGNAL,
    OFF_BY_ONE,
    off_by_one,
    verdict,
)
from envkit.validation.runtime import RuntimeTarget, run_runtime
from envkit.wire import StepResult

ENVS = Path(__file__).parent / "envs"


def _engine(*episodes: Episode) -> ServerPlayer:
    engine = ServerPlayer(Settings.resolve(None, RunOptions()))
    engine.episodes.extend(episodes)
    return engine


def _ep(seed: int, policy: str, *rewards: float | None) -> Episode:
    ep = Episode(seed, {}, policy=policy)
    for r in rewards:
        ep.record(StepResult({}, r, False), {"answer": "x"})
    return ep


WEAK = ("fuzz", "degenerate:empty", "degenerate:maximum", "explore")


def _found(engine: ServerPlayer) -> list[str]:
    return [f.data.get("kind", "") for f in engine.findings if f.code == NO_TRAINING_SIGNAL.code]


def test_no_reward_earned_is_reported_and_says_what_grpo_sees() -> None:
    engine = _engine(
        *(_ep(s, p, 0.0, 0.0) for s in (0, 1) for p in WEAK),
        _ep(0, "oracle", 1.0),  # the oracle earning is no signal for an untrained model
    )
    verdict(engine, oracle_reached=True)
    assert _found(engine) == ["no-reward"]
    (finding,) = engine.findings
    assert finding.severity.value == "info"
    assert "none of the 8 episodes" in finding.message
    assert "The oracle reaches 1, so the reward works" in finding.message
    assert "every group's advantages at zero: no gradient" in finding.message
    assert "partial credit" in finding.message and "SFT warm-up" in finding.message
    assert NO_TRAINING_SIGNAL.code in engine.checks_run


def test_the_low_end_is_the_declared_one_not_zero() -> None:
    engine = _engine(*(_ep(s, p, 0.0) for s in (0, 1) for p in WEAK))
    engine.settings = dataclasses.replace(engine.settings, lo=-1.0)  # 0 is above -1: earned
    verdict(engine, oracle_reached=False)
    assert _found(engine) == ["no-variance"]  # earned, but the same in every group
    engine = _engine(*(_ep(s, p, -1.0) for s in (0, 1) for p in WEAK))
    engine.settings = dataclasses.replace(engine.settings, lo=-1.0)
    verdict(engine, oracle_reached=False)
    assert _found(engine) == ["no-reward"]
    assert "The oracle reaches" not in engine.findings[0].message  # none declared


def test_same_return_within_every_seed_is_reported() -> None:
    engine = _engine(*(_ep(s, p, 0.1 * (s + 1)) for s in (0, 1, 2) for p in WEAK))
    verdict(engine, oracle_reached=True)
    assert _found(engine) == ["no-variance"]
    assert "seed 0: 0.1 x4, seed 1: 0.2 x4" in engine.findings[0].message


def test_only_the_oracle_at_the_top_and_weak_policies_varying_is_quiet() -> None:
    engine = _engine(
        *(_ep(s, p, 0.0) for s in (0, 1) for p in WEAK[:3]),
        _ep(0, "explore", 0.0, 0.2),  # one weak rollout earns a little: advantages non-zero
        _ep(1, "explore", 0.0),
        _ep(0, "oracle", 1.0),
    )
    verdict(engine, oracle_reached=True)
    assert _found(engine) == []
    assert NO_TRAINING_SIGNAL.code in engine.checks_run


def test_too_few_weak_episodes_or_a_constant_reward_is_not_judged() -> None:
    few = _engine(_ep(0, "fuzz", 0.0), _ep(0, "explore", 0.0), _ep(0, "oracle", 0.0, None))
    verdict(few, oracle_reached=False)
    assert few.findings == [] and NO_TRAINING_SIGNAL.code not in few.checks_run
    constant = _engine(*(_ep(s, p, 0.5) for s in (0, 1) for p in WEAK))
    constant.add(reward.REWARD_CONSTANT, "every step 0.5")  # EK504 says it already
    verdict(constant, oracle_reached=False)
    assert _found(constant) == []
    ignored = _engine(*(_ep(s, p, 0.1 * s) for s in (0, 1) for p in WEAK))
    ignored.add(integrity.REWARD_IGNORES_ACTION, "the step count pays")  # EK511 says it
    verdict(ignored, oracle_reached=False)
    assert _found(ignored) == []
    below = _engine(*(_ep(s, p, -1.0) for s in (0, 1) for p in WEAK))
    below.add(reward.REWARD_OUT_OF_RANGE, "-1 is below 0")  # EK503: "above lo" means nothing
    verdict(below, oracle_reached=False)
    assert _found(below) == []


def test_off_by_one_nudges_every_number_however_nested() -> None:
    call = {"tool_name": "submit_answer", "arguments": {"amount": 2256.29, "n": [3, True]}}
    assert off_by_one(call) == {
        "tool_name": "submit_answer",
        "arguments": {"amount": 2257.29, "n": [4, True]},  # booleans are not numbers
    }
    assert off_by_one({"answer": "42"}) == {"answer": "42"}  # text is the format probe's


def test_a_near_miss_that_still_wins_is_not_a_weak_rollout() -> None:
    """The nudged number did not decide the reward (a confidence next to a right answer):
    the near miss reaching the top is no miss, and cannot hide a sparse task."""
    engine = _engine(*(_ep(s, p, 0.0) for s in (0, 1) for p in WEAK), _ep(0, OFF_BY_ONE, 0.0, 1.0))
    verdict(engine, oracle_reached=True)
    assert _found(engine) == ["no-reward"]
    assert "off by one" not in engine.findings[0].message
    engine = _engine(*(_ep(s, p, 0.0) for s in (0, 1) for p in WEAK), _ep(0, OFF_BY_ONE, 0.0, 0.45))
    verdict(engine, oracle_reached=True)
    assert _found(engine) == []  # a closeness credit for the near miss: a signal


@pytest.mark.slow
def test_a_sparse_task_no_weak_policy_solves_gets_it_over_the_wire() -> None:
    """realworld_sparse: a seeded 6-digit code, never shown: every policy envkit tries sees 0.
    It is the hard-task case the rule is for (info), not EK504 (no oracle to judge that)."""
    root = ENVS / "realworld_sparse"
    out = run_runtime(
        RuntimeTarget(url=None, envdir=EnvDir(root), python=sys.executable),
        RunOptions(episodes=3),
    )
    (found,) = [f for f in out.findings if f.code == NO_TRAINING_SIGNAL.code]
    assert found.data["kind"] == "no-reward" and found.severity.value == "info"
    assert "above the low end 0 of `validation.reward.range`" in found.message
    assert {f.code for f in out.findings} == {"EK507", "EK523"}


@pytest.mark.slow
@pytest.mark.parametrize("template", ["rlvr", "code", "tools"])
def test_a_template_stays_quiet(tmp_path: Path, template: str) -> None:
    """Fuzzed, degenerate and exploring answers earn nothing on these templates; the oracle's
    near misses do: rlvr's answer tag with a wrong number earns the format's part, code's
    program right on half the inputs passes some tests, tools' amount off by one earns its
    closeness credit (the last two played by this rule). The whole family is held to its
    findings by tests/templates/test_family.py."""
    from envkit.scaffold import init_project
    from envkit.validation import validate

    made = init_project(f"{template}-env", template=template, output_dir=tmp_path, lock=False)
    report = validate(made.path, python=sys.executable, select=["EK523"], train_path=False)
    (check,) = [c for c in report.checks if c.code == NO_TRAINING_SIGNAL.code]
    assert check.status == "passed", check.reason  # judged, not skipped
    assert [f.message for f in report.findings] == []
