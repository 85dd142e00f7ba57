"""Why a runtime rule was not evaluated, as the report says it: the time ran out (the whole
stage's, or the reward-design probes' share of it), the stage stopped on a finding of its own,
or it was not reached."""

from __future__ import annotations

from envkit.validation import report as R
from envkit.validation.engine import NoAnswer, ObservationTooLarge, OutOfTime
from envkit.validation.lanes.stages import _unplayed_because
from envkit.validation.rules.liveness import ENV_UNRESPONSIVE, OBSERVATION_TOO_LARGE_RULE
from envkit.validation.runtime import RuntimeOutcome


def _outcome(findings: list | None = None, **kw: object) -> RuntimeOutcome:
    return RuntimeOutcome(findings or [], [], {}, **kw)  # type: ignore[arg-type]


def test_the_stage_out_of_time_skips_every_rule_it_left_for_time() -> None:
    out = _outcome(stopped=OutOfTime(), out_of_time=["the runtime stage"])
    assert _unplayed_because(out, "EK411") == R.OUT_OF_TIME
    assert _unplayed_because(out, "EK521") == R.OUT_OF_TIME


def test_probes_out_of_time_skip_only_the_reward_rules_for_time() -> None:
    out = _outcome(out_of_time=["code hacks probe"])
    assert _unplayed_because(out, "EK521") == R.OUT_OF_TIME
    assert _unplayed_because(out, "EK416") == R.NOT_EVALUATED_BY_RUNTIME


def test_a_stop_names_the_finding_that_stopped_the_stage() -> None:
    big = _outcome(
        stopped=ObservationTooLarge("`reset(seed=0)`", 10_000_000),
        findings=[OBSERVATION_TOO_LARGE_RULE.finding("too large")],
    )
    assert (
        _unplayed_because(big, "EK503") == "the runtime stage stopped before it played: see EK432"
    )
    hung = _outcome(stopped=NoAnswer("`step`"), findings=[ENV_UNRESPONSIVE.finding("no answer")])
    assert _unplayed_because(hung, "EK503").endswith("see EK422")


def test_a_rule_not_reached_says_so() -> None:
    assert _unplayed_because(_outcome(), "EK503") == R.NOT_EVALUATED_BY_RUNTIME
