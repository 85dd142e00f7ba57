"""EK411/EK412 across server processes: an episode is a function of its seed and actions,
not of the process that plays it.

Played among the reward-design probes (:data:`envkit.validation.runtime.REWARD_PROBES`), after
the question-blind policies, so the episode replayed is the one whose rewards say most
(partial credit shows what a salted string hash or the local time changes). The rules are
:mod:`envkit.validation.rules.determinism`'s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from envkit.validation import twin
from envkit.validation.engine import Episode
from envkit.validation.probing import Probes, fmt
from envkit.validation.rules import determinism

#: What a second server process changes of the first one's surroundings: nothing an episode
#: may depend on. The hash seed salts ``hash(str)`` (a dict or set ordered by string hashes,
#: weights from ``hash``); the time zone and the locale change ``time.localtime``,
#: ``strftime`` and locale-aware formatting.
SURROUNDINGS = {"TZ": "Pacific/Kiritimati", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}


def other_surroundings(first: Mapping[str, str]) -> dict[str, str]:
    """The second process's overrides of :data:`SURROUNDINGS` and a hash seed other than the
    first process's (``first``: the environment it was started with)."""
    seed = "2" if first.get("PYTHONHASHSEED") == "1" else "1"
    return {**SURROUNDINGS, "PYTHONHASHSEED": seed}


def _informative(
    episodes: list[Episode], seeds: tuple[int, ...], lo: float, hi: float
) -> Episode | None:
    """The played episode of a declared seed whose rewards say most: the most distinct
    rewards strictly inside the range (partial credit, where a salted hash or the clock
    shows), then the longest."""

    def score(ep: Episode) -> tuple[int, int]:
        inside = {r for r in ep.rewards if isinstance(r, int | float) and lo < r < hi}
        return len(inside), len(ep.steps)

    played = [
        ep
        for ep in episodes
        if ep.seed in seeds and ep.steps and not ep.policy.startswith(("oracle:", "replay"))
    ]
    return max(played, key=score) if played else None


def surroundings(probes: Probes) -> None:
    """EK411/EK412: an episode is a function of its seed and actions, not of the server
    process. The played episode whose rewards say most (:func:`_informative`) is replayed on
    the same server (what changes within a process is volatile: timings, ids) and on a second
    process of the same launch form whose hash seed, time zone and locale differ
    (:data:`SURROUNDINGS`), and the two replays compared. Played among the reward-design
    probes, on every environment envkit started (one more server start); skipped when a seed
    is ignored (EK413 says it) or an episode already differed in one process."""
    engine = probes.engine
    server = engine.server
    cand = getattr(server, "candidate", None)
    settings = engine.settings
    first = _informative(engine.episodes, settings.seeds, settings.lo, settings.hi)
    if (
        first is None
        or server is None
        or cand is None
        or any(
            engine.has(r)
            for r in (
                determinism.SEED_IGNORED,
                determinism.RESET_NONDETERMINISTIC,
                determinism.REWARD_NONDETERMINISTIC,
            )
        )
        or not probes.time_left("second server process")
        or engine.remaining_s() < 10
    ):
        return
    seed = first.seed
    here = probes.play(seed, list(first.actions), "replay")
    volatile = determinism.volatile_paths(first, here)
    engine.progress("replaying one episode on a second server process (other hash seed, TZ)")
    given = server._spawn_args.get("env")
    given = dict(given) if isinstance(given, Mapping) else {}
    env = {**given, **other_surroundings({**os.environ, **given})}
    ep = twin.replay_on_second_process(engine, first, env=env, skip_errors=True)
    if ep is None:
        return
    engine.ran(determinism.RESET_NONDETERMINISTIC, determinism.REWARD_NONDETERMINISTIC)
    diffs = determinism.compare(here, ep, volatile)
    if not diffs:
        return
    d = diffs[0]
    rule = (
        determinism.REWARD_NONDETERMINISTIC
        if d.where.startswith("reward")
        else determinism.RESET_NONDETERMINISTIC
    )
    if engine.has(rule):
        return
    where = "after `reset`" if d.where in ("reset", "state after reset") else f"at {d.where}"
    engine.add(
        rule,
        f"An episode must be a function of its seed and actions; replaying "
        f"`reset(seed={seed})` and the same actions on a second server process whose hash "
        f"seed (`PYTHONHASHSEED`), time zone and locale differ gave `{d.path}` = "
        f"{fmt(d.second)} {where} where the first process gave {fmt(d.first)} (the same "
        "process repeats it). Most likely the environment iterates a set or a dict keyed by "
        "strings whose order follows `hash()`, uses `hash()` of a string, or reads the local "
        "time: every Space restart and every server replica of a trainer then plays another "
        "episode for the same seed.",
        seed=seed,
        where=d.where,
        field=d.path,
        first=d.first,
        second=d.second,
        process=2,
    )
