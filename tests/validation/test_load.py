"""EK517-EK519, what long runs do to the server (envkit.validation.rules.load): the resident
memory read from /proc, which episodes' observations grow."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envkit.validation.engine import Episode
from envkit.validation.rules import load
from envkit.wire import StepResult


def test_resident_memory_is_read_from_proc() -> None:
    if not Path("/proc/self/status").exists():
        pytest.skip("no /proc: the memory probe is skipped on this system")
    assert load._rss_bytes(os.getpid()) > 1_000_000


def _episode(sizes: list[int], done: bool = True, policy: str = "explore") -> Episode:
    """An episode whose step observations serialize to about ``sizes`` bytes."""
    ep = Episode(0, {"text": ""}, policy=policy)
    for n in sizes:
        ep.record(StepResult({"text": "x" * n}, 0.0, False, 0.0, {}), {})
    ep.done = done
    return ep


def test_an_observation_that_doubles_on_every_step_grows() -> None:
    assert load._growing(_episode([100, 140, 180, 220, 260, 300])) is not None
    # the terminal observation may drop the task
    assert load._growing(_episode([100, 140, 180, 220, 260, 300, 90])) is not None


def test_short_bounded_or_slow_growth_is_not_judged() -> None:
    assert load._growing(_episode([100, 200, 300, 400, 500])) is None  # 5 steps
    assert load._growing(_episode([100, 120, 140, 140, 140, 140, 140])) is None  # a window
    assert load._growing(_episode([140, 146, 150, 155, 160, 165, 170, 175])) is None  # +25 %
