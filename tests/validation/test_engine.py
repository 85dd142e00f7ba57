"""The runtime engine's plumbing without a server: settings, guarding, reward classes."""

from __future__ import annotations

import pytest

from envkit.envdir.manifest import read_manifest
from envkit.validation.engine import NoAnswer, ServerPlayer, Settings
from envkit.validation.options import RunOptions
from envkit.validation.rules import liveness, reward

from .conftest import KNOBS


def test_settings_from_the_manifest_and_the_timeout():
    s = Settings.resolve(read_manifest(KNOBS).spec, RunOptions(episodes=0, seed=3))
    assert s.episodes == 1 and s.seed == 3
    assert s.reply_s == 2.0  # 2 x step_timeout_s (1.0), at least 2 s
    assert s.startup_s == 90 and s.budget_s == 600
    assert s.max_steps == 4 and s.max_steps_declared and s.seeds == (0, 1)
    assert s.oracle == "server.oracle:policy" and s.has_manifest
    t = Settings.resolve(None, RunOptions(episodes=2, seed=0, timeout_s=0.2))
    assert t.reply_s == 0.5 and t.startup_s == 0.2 and t.budget_s == 0.2
    assert t.max_steps == 50 and not t.max_steps_declared and t.oracle is None
    assert (t.lo, t.hi) == (0.0, 1.0) and not t.has_manifest


def test_guard_turns_a_crash_into_a_finding_and_goes_on():
    engine = ServerPlayer(Settings.resolve(None, RunOptions(episodes=1, seed=0)))

    def broken():
        raise KeyError("observation")

    assert engine.guard("broken check", broken) is None
    assert engine.guard("next check", lambda: 7) == 7
    liveness.crashes(engine)
    (f,) = engine.findings
    assert f.code == "EK430" and f.data["check"] == "broken check"
    assert "KeyError" in f.message and "`broken check` check" in f.message
    assert engine.checks == ["broken check", "next check"]
    assert "Traceback" not in f.message  # only with ENVKIT_DEBUG=1


def test_a_crash_shows_its_traceback_with_envkit_debug(monkeypatch: pytest.MonkeyPatch):
    """The finding's fix promises the traceback under ENVKIT_DEBUG=1: the message carries it
    (findings' ``data`` is not in the text or JSON report)."""
    monkeypatch.setenv("ENVKIT_DEBUG", "1")
    engine = ServerPlayer(Settings.resolve(None, RunOptions(episodes=1, seed=0)))

    def broken():
        raise KeyError("observation")

    engine.guard("broken check", broken)
    liveness.crashes(engine)
    (f,) = engine.findings
    assert "Traceback (most recent call last)" in f.message and "in broken" in f.message


def test_guard_lets_a_stop_through():
    engine = ServerPlayer(Settings.resolve(None, RunOptions(episodes=1, seed=0)))

    def hangs():
        raise NoAnswer("`step`")

    with pytest.raises(NoAnswer):
        engine.guard("hanging check", hangs)
    assert engine.crashes == []


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (None, "EK501"),
        (True, "EK502"),
        ("1", "EK502"),
        ([1], "EK502"),
        (1.5, "EK503"),
        (-0.1, "EK503"),
        (0.0, None),
        (1, None),
        (1.0 + 1e-12, None),
    ],
)
def test_reward_classes_are_decided_once(value, code):
    found = reward.classify(value, 0.0, 1.0)
    assert (found[0].code if found else None) == code


def test_the_probes_may_take_a_third_of_what_is_left_not_a_fixed_30_s():
    """A busy machine or a slow grader needs more than 30 s of probes; the run's budget
    (--timeout) bounds them instead, and two thirds of what is left stay for the rest."""
    from envkit.validation import probing

    engine = ServerPlayer(Settings.resolve(None, RunOptions(episodes=1, seed=0)))
    left = engine.remaining_s()
    assert 590 < left <= 600  # the default run: 600 s
    assert left / 3 - 1 < probing.probes_budget_s(engine) <= left / 3
    assert probing.probes_budget_s(engine) > 190  # not 30 s
    short = ServerPlayer(Settings.resolve(None, RunOptions(episodes=1, seed=0, timeout_s=6)))
    assert probing.probes_budget_s(short) <= 2.0
