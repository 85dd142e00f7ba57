"""EK513 stalling pays (envkit.validation.rules.return_farming): near misses of the oracle's
action and the return compared, on plain values."""

from __future__ import annotations

import time

import pytest

from envkit.validation.engine import Episode
from envkit.validation.probing import Probes, episode_return
from envkit.validation.rules import return_farming
from envkit.wire import StepResult


def test_near_misses_stay_within_the_declared_bounds() -> None:
    schema = {
        "properties": {
            "guess": {"type": "integer", "minimum": 1, "maximum": 100},
            "word": {"type": "string"},
            "mode": {"type": "string", "enum": ["a", "b"]},
        }
    }
    probes = Probes(engine=None, schema=schema, wins={}, deadline=time.monotonic() + 60)  # type: ignore[arg-type]
    misses = return_farming.near_misses(probes, {"guess": 1, "word": "cat", "mode": "a"}, 4)
    assert {"guess": 0, "word": "cat", "mode": "a"} not in misses  # below `minimum`
    assert {"guess": 2, "word": "cat", "mode": "a"} in misses
    assert {"guess": 1, "word": "cag", "mode": "a"} in misses  # last letter changed
    assert all(m["mode"] == "a" for m in misses) and len(misses) == 4


def test_return_and_stalling_compare_the_sum_of_step_rewards() -> None:
    def ep(policy: str, rewards: list[float], actions: list[int]) -> Episode:
        e = Episode(0, {}, policy=policy)
        for r, a in zip(rewards, actions, strict=True):
            e.record(StepResult({}, r, False), {"guess": a})
        return e

    win = ep("oracle", [0.0, 1.0], [50, 51])
    longer = ep("fuzz", [0.4, 0.4, 1.0], [1, 2, 51])
    quicker = ep("fuzz", [1.0], [51])  # a shorter win is no stalling
    assert episode_return(longer) == pytest.approx(1.8)
    found = return_farming._best_stall([win, longer, quicker], win, 1.0)
    assert found is not None and found["why"] == "is longer" and found["policy"] == "fuzz"
    assert return_farming._best_stall([win, quicker], win, 1.0) is None
