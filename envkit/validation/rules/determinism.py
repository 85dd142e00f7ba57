"""EK4xx determinism: a seed fixes the episode, and different seeds give different episodes.

Every seed of ``seeds`` is played twice with the same actions on fresh sessions (Gymnasium's
determinism check); the deterministic episodes are the reference the sessions check compares
interleaved play with. Source: issue #3 ("EK4xx runtime and protocol").
"""

from __future__ import annotations

from typing import Any

from envkit.findings import Severity, register
from envkit.validation import fuzz
from envkit.validation.engine import ActionPool, Engine, Episode
from envkit.wire import EnvErrorFrame

RESET_NONDETERMINISTIC = register(
    "EK411", "reset-not-deterministic", Severity.ERROR,
    rfc008="runtime.episode_determinism",
    summary="`reset(seed=s)` twice gives different observations.",
    what="For each seed in `envkit.seeds`, envkit resets twice on fresh sessions and "
         "deep-compares the observations, reporting the first differing field.",
    why="Reproducible evaluation and debugging need a seed to fix the episode "
        "(Gymnasium's determinism check).",
    example="`reset` draws its task with the global `random` module instead of "
            "`random.Random(seed)`.",
    fix="Derive every random choice in `reset` from `random.Random(seed)` (or a seeded "
        "numpy Generator) stored on the instance.",
)

REWARD_NONDETERMINISTIC = register(
    "EK412", "rewards-not-deterministic", Severity.ERROR,
    rfc008="runtime.episode_determinism",
    summary="The same seed and the same actions give different rewards.",
    what="envkit replays one action sequence twice after `reset(seed=s)` and compares the "
         "step rewards one by one.",
    why="A reward that changes for the same trajectory is noise in the learning signal and "
        "makes runs impossible to reproduce.",
    example="A rubric that samples an LLM judge at temperature 1, or uses the global RNG.",
    fix="Seed every random draw from the episode's seed; make judges deterministic "
        "(temperature 0, cached).",
)

SEED_IGNORED = register(
    "EK413", "seed-ignored", Severity.WARNING,
    rfc008="runtime.seed_control",
    summary="Different seeds give identical episodes: `reset()` most likely ignores `seed`.",
    what="envkit resets with every seed in `envkit.seeds` and plays the same actions; "
         "when every reset observation and every reward is identical, the seed has no effect.",
    why="OpenEnv silently drops `reset` arguments the method does not declare "
        "(huggingface/OpenEnv#1102): `reset(seed=3)` then trains on one episode forever.",
    example="`def reset(self):` (the `openenv init` template) — no `seed` parameter.",
    fix="Declare `reset(self, seed=None, episode_id=None, **kwargs)` and draw the episode "
        "from `random.Random(seed)`. If the environment has no randomness at all, ignore "
        "EK413.",
)


def _fmt(value: Any) -> str:
    return fuzz.short_json(value, 80)


def check(engine: Engine, actions: ActionPool) -> dict[int, Episode] | None:
    """EK411, EK412, EK413.

    Returns:
        The reference episode of every seed (seed -> episode) when the environment is
        deterministic, else ``None``.
    """
    def replay(_obs: dict[str, Any], i: int) -> dict[str, Any]:
        return actions.at(i)

    runs: dict[int, tuple[Episode, Episode]] = {}
    for seed in engine.settings.seeds:
        try:
            runs[seed] = (engine.play_alone(seed, replay), engine.play_alone(seed, replay))
        except EnvErrorFrame as exc:
            if exc.code == "CAPACITY_REACHED":
                raise
            return None
    engine.ran(RESET_NONDETERMINISTIC, REWARD_NONDETERMINISTIC)
    deterministic = True
    for seed, (a, b) in runs.items():
        diff = fuzz.first_difference(a.reset_obs, b.reset_obs)
        if diff and not engine.has(RESET_NONDETERMINISTIC):
            deterministic = False
            path, va, vb = diff
            engine.add(RESET_NONDETERMINISTIC,
                       f"`reset(seed={seed})` must return the same observation twice; got "
                       f"two different `{path}` values ({_fmt(va)}, {_fmt(vb)}). Most likely "
                       "`reset()` draws from an unseeded random generator.",
                       seed=seed, field=path, first=va, second=vb)
        diff = fuzz.first_difference(a.rewards, b.rewards)
        if diff and not engine.has(REWARD_NONDETERMINISTIC):
            deterministic = False
            path, va, vb = diff
            engine.add(REWARD_NONDETERMINISTIC,
                       f"The same seed ({seed}) and the same actions must give the same "
                       f"rewards; step rewards differ at `rewards{path}` ({_fmt(va)}, "
                       f"{_fmt(vb)}). Most likely the reward uses an unseeded random "
                       "generator or outside state.", seed=seed, field=path, first=va,
                       second=vb)
    if not deterministic:
        return None
    reference = {seed: a for seed, (a, _b) in runs.items()}
    if len(runs) >= 2:
        engine.ran(SEED_IGNORED)
        first, *others = reference.values()
        if all(fuzz.first_difference(first.trace(), e.trace()) is None for e in others):
            engine.add(SEED_IGNORED,
                       f"Different seeds ({', '.join(map(str, runs))}) must give different "
                       "episodes; every reset observation and every reward was identical. "
                       "Most likely `reset()` ignores `seed` (OpenEnv silently drops "
                       "arguments `reset` does not declare).", seeds=list(runs))
    return reference
