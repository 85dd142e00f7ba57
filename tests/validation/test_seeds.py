"""A seed must fix the whole episode, as GRPO uses it: every generation of a group faces the
same episode. The ``seed_duel`` environment (tests/validation/envs/seed_duel) draws its
target and its opponent's rolls without the seed in one way per mode; each must give EK411
or EK413, and the modes without an unseeded draw must give neither.

One server started by envkit (as ``envkit validate PATH`` does) serves every mode through a
mode file; the determinism check runs against it with envkit's own engine, so the
second-process replay starts a twin of it, with the same mode file.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from envkit.envdir.manifest import read_manifest
from envkit.findings import Finding
from envkit.validation.engine import ActionPool, ServerPlayer, Settings
from envkit.validation.options import RunOptions
from envkit.validation.rules import determinism
from tests.helpers import descendants

SEED_DUEL = Path(__file__).parent / "envs" / "seed_duel"

# fixed actions: "x" and "7" never win, so the opponent's rolls decide how episodes end
ACTIONS = ActionPool([{"answer": "x"}, {"answer": "7"}])


@pytest.fixture(scope="module")
def duel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerPlayer, Path]]:
    """(an engine holding the started seed_duel server, its mode file)."""
    mode_file = tmp_path_factory.mktemp("seed_duel") / "mode"
    mode_file.write_text("")
    os.environ["SEED_MODE_FILE"] = str(mode_file)  # inherited by the server and its twin
    before = descendants(os.getpid())
    engine = _engine()
    try:
        engine.env_root, engine.python = SEED_DUEL, sys.executable
        engine.start_server("server.app:app")
        yield engine, mode_file
    finally:
        os.environ.pop("SEED_MODE_FILE", None)
        engine.close()
        time.sleep(0.2)
        assert descendants(os.getpid()) <= before, "a server process was left behind"


def _engine() -> ServerPlayer:
    settings = Settings.resolve(
        read_manifest(SEED_DUEL).spec, RunOptions(episodes=1, seed=0, timeout_s=120)
    )
    return ServerPlayer(settings)


def _check(duel: tuple[ServerPlayer, Path], mode: str) -> list[Finding]:
    started, mode_file = duel
    mode_file.write_text(mode)
    engine = _engine()
    engine.server, engine.url = started.server, started.url
    determinism.check(engine, ACTIONS)
    assert "EK411" in engine.checks_run
    engine.server = None  # the module's fixture stops it
    return [f for f in engine.findings if f.code in ("EK411", "EK412", "EK413")]


@pytest.mark.parametrize(
    ("mode", "code", "where"),
    [
        # an opponent's move drawn from the module `random`: two plays of a seed differ at
        # a step (which one is chance: a die)
        ("global_step", "EK411", "step"),
        # a reset-time generator not seeded from the reset seed
        ("instance_fresh", "EK411", "reset"),
        # a module-global list shuffled at every reset
        ("shuffle_reset", "EK411", "reset"),
        # the task's own numpy RandomState() created without the seed
        ("numpy_task", "EK411", "reset"),
        # one Random(1234) per instance, never reseeded: every fresh session plays the same
        # episode, so only the same seed replayed on one session shows it, at a step (the
        # reset is the same)
        ("instance_fixed", "EK413", "step 1"),
        # (the reset modes draw a seat in a million with the target: they differ at reset)
    ],
)
def test_a_seed_that_does_not_fix_the_episode_is_reported(duel, mode, code, where) -> None:
    (f,) = _check(duel, mode)
    assert f.code == code, f.message
    assert f.data["where"].startswith(where), f.data
    assert f.data["first"] != f.data["second"]


def test_an_opponent_from_a_per_instance_generator_names_the_same_seed(duel) -> None:
    (f,) = _check(duel, "instance_fixed")
    assert f.data["episode"] == 2 and f.data["resets"][:2] == [0, 0]
    assert f.data["field"] == "opponent"
    assert "The same seed gave two different episodes" in f.message
    assert "GRPO" in f.message


def test_a_shuffle_at_import_shows_only_in_a_second_process(duel) -> None:
    (f,) = _check(duel, "shuffle_import")
    assert f.code == "EK413" and f.data["process"] == 2, f.message
    assert "second process" in f.message and "at import" in f.message
    # the permutation's first five entries: two processes agree 1 time in 720
    assert f.data["first"] != f.data["second"]


@pytest.mark.parametrize("mode", ["", "none"])
def test_seeded_or_randomness_free_episodes_give_no_finding(duel, mode) -> None:
    # "": everything from random.Random(seed); none: a fixed target and rolls 1, 2, 3, ...
    # (nothing a seed could fix), checked on a second process as well
    assert _check(duel, mode) == []
