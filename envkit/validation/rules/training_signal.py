"""EK523 training signal before training: do envkit's weak policies earn any reward, and does
it vary between the rollouts of one seed?

A group-relative trainer (GRPO, RLOO) plays a group of rollouts per prompt and scores each
against its group's mean. If every rollout of a group returns the same, every advantage is
zero and the step gives no gradient. envkit's weak policies stand in for an untrained model:
the fuzzed, degenerate and exploring episodes the runtime stage already played, and the
oracle's near misses a model that follows the prompt writes at step 0 (its answer with a wrong
value in the same form, played by the format probe; played here only when nothing else earned:
its final action with every number off by one, wherever it sits (a tool call's arguments), and
for code, its program right on about half the inputs). Their episodes grouped by reset seed
are the groups a trainer would see at step 0.

Source: RFC 008 (huggingface/OpenEnv#1041) reserves ``statistical.training_signal`` for the
hub lane; this is its local, step-0 approximation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from envkit.findings import Severity, register
from envkit.validation.engine import EPS, Episode, ServerPlayer, is_number
from envkit.validation.probing import Probes, field_schema, fits
from envkit.validation.rules import grader_hacks, integrity, reward

NO_TRAINING_SIGNAL = register(
    "EK523",
    "no-training-signal",
    Severity.INFO,
    rfc008="statistical.training_signal",
    summary="envkit's weak policies earn no reward, or the same reward for every rollout of a "
    "seed: a group-relative trainer gets no gradient at step 0.",
    what="envkit groups the episodes its weak policies played (fuzzed, degenerate and "
    "exploring; never the oracle) and the oracle's near misses (its answer with a wrong "
    "value in the same form; its final action with every number off by one, such as a tool "
    "call's amount; for code, its program right on about half the inputs; the last two played "
    "only when nothing else earned, and a near miss that still wins is left out) by reset "
    "seed, as GRPO groups the rollouts of one prompt, and scores each episode by its return "
    "(the sum of its numeric step rewards). It "
    "reports when no weak episode earned a step reward above the low end of "
    "`validation.reward.range`, or when reward was earned but every seed's episodes returned "
    "the same. Judged from at least 4 weak episodes with numeric rewards; not reported with "
    "EK502/EK503 (rewards that are not numbers or outside the range), EK504 (the reward is "
    "constant for every policy, the oracle included) or EK511 (the reward does not depend on "
    "the action): the reward is then broken, not sparse. It is info: a hard "
    "task is allowed to be hard, and a trained model is stronger than envkit's weak policies.",
    why="Every group's advantages are then zero: the first steps of training compute no "
    "gradient and burn GPU-hours until the model solves a task by chance, which for a "
    "sparse exact-answer task may be never.",
    example="`reward = 1.0 if answer == str(a * b) else 0.0` for two 3-digit numbers: no "
    "fuzzed, empty or exploring answer is ever exact; or a fixed participation credit per "
    "question for any wrong answer (reward earned, the same for every rollout of a seed).",
    fix="Give partial credit that depends on the answer (a denser reward: closeness, tests "
    "passed, steps solved), start training on an easier curriculum level, start from a "
    "stronger model, or warm it up with SFT on solved episodes. Ignore it (`ignore = "
    '["EK523"]`) when you know your starting model already solves some tasks.',
    limits="The oracle's answer with a wrong value in the same form counts as a weak policy's: "
    "a reward that pays only for that form (tags around any number) reads as a signal.",
    classes=("rl-envdoctor:reward-saturation",),
)

OFF_BY_ONE = "signal:off-by-one"
HALF_RIGHT = "signal:half-right"
#: The policies that stand in for an untrained model (``Episode.policy``; ``degenerate:*`` too):
#: envkit's weak policies, and the oracle's near misses (the format probe's wrong value in the
#: oracle's form, :data:`OFF_BY_ONE`, :data:`HALF_RIGHT`).
WEAK_POLICIES = ("fuzz", "explore", "probe:wrong-value", OFF_BY_ONE, HALF_RIGHT)
#: Appended to the oracle's program: the same function, made to return ``None`` for about half
#: the inputs (those whose ``repr`` has an odd sum of code points): a partly right solution.
HALF_RIGHT_WRAPPER = """

_envkit_right_{name} = {name}


def {name}(*args, **kwargs):
    out = _envkit_right_{name}(*args, **kwargs)
    return out if sum(map(ord, repr(args))) % 2 == 0 else None
"""
#: Weak episodes with a numeric reward needed before the rule is judged.
MIN_EPISODES = 4


@dataclass(frozen=True)
class Rollout:
    """One weak episode as a trainer scores it.

    Attributes:
        seed: the reset seed (the group it belongs to).
        policy: who played it (``fuzz``, ``explore``, ``degenerate:empty``, ...).
        ret: the sum of its numeric, finite step rewards.
        best: its best such step reward.
    """

    seed: int | None
    policy: str
    ret: float
    best: float


def is_weak(policy: str) -> bool:
    """Whether ``policy`` (an :attr:`Episode.policy`) is one of envkit's weak policies. The
    question-blind ones (``blind:*``) are not: they stand in for a reward hacker, not for an
    untrained model, and EK524 judges what they earn."""
    return policy in WEAK_POLICIES or policy.startswith("degenerate:")


def rollouts(episodes: Iterable[Episode], hi: float = math.inf) -> list[Rollout]:
    """The weak episodes that got at least one numeric, finite step reward, as rollouts.

    Args:
        hi: the top of the reward range: an :data:`OFF_BY_ONE` episode reaching it is left
            out (the nudged number did not decide the reward: that was no miss).
    """
    out = []
    for ep in episodes:
        if not is_weak(ep.policy) or not ep.sent_valid():
            continue
        nums = [float(r) for r in ep.rewards if is_number(r) and math.isfinite(float(r))]
        if nums and not (ep.policy == OFF_BY_ONE and max(nums) >= hi - EPS):
            out.append(Rollout(ep.seed, ep.policy, sum(nums), max(nums)))
    return out


def off_by_one(value: object) -> object:
    """``value`` (an action, or any JSON value in it) with every number, however deeply
    nested, one more (an integer stays an integer; booleans are not numbers)."""
    if isinstance(value, dict):
        return {k: off_by_one(v) for k, v in value.items()}
    if isinstance(value, list):
        return [off_by_one(v) for v in value]
    if is_number(value) and math.isfinite(value):
        return value + 1
    return value


def groups(found: Sequence[Rollout]) -> dict[int | None, list[float]]:
    """Returns by seed, only the seeds with at least two rollouts (a group of one has no
    variance to lack)."""
    by_seed: dict[int | None, list[float]] = {}
    for r in found:
        by_seed.setdefault(r.seed, []).append(r.ret)
    return {seed: rets for seed, rets in by_seed.items() if len(rets) >= 2}


def training_signal(probes: Probes) -> None:
    """EK523, played among the reward-design probes (after the format probe, whose
    wrong-value episodes it reads). When no weak episode earned, it first plays, within the
    probes' deadline, one fresh episode per winning seed of the oracle's near misses: its
    actions with the final one's numbers off by one (:func:`off_by_one`: a grader paying for
    closeness, such as a tool call's amount nested in its arguments, then shows its partial
    credit) and, when the action carries code the oracle solved, its program made half right
    (:data:`HALF_RIGHT_WRAPPER`) on every step (a grader paying the fraction of tests passed).
    Then :func:`verdict`."""
    engine = probes.engine
    found = rollouts(engine.episodes, engine.settings.hi)
    earned = any(r.best > engine.settings.lo + EPS for r in found)
    if found and not earned and not (_play_off_by_one(probes) and _play_half_right(probes)):
        return  # the deadline left a near miss unplayed: not judged (a note says so)
    verdict(engine, oracle_reached=bool(probes.wins))


def _play_off_by_one(probes: Probes) -> bool:
    """The oracle's actions with the final one's numbers off by one (:func:`off_by_one`; a
    top-level field whose schema bounds the nudged value keeps its value), in a fresh
    episode per winning seed; ``False`` when the probes' deadline stopped it."""
    for seed, win in probes.wins.items():
        final = win.actions[-1]
        nudged = {
            name: moved if fits(field_schema(probes, name), moved) else value
            for name, value in final.items()
            for moved in (off_by_one(value),)
        }
        if nudged == final:
            continue  # no number to nudge
        if not probes.time_left("training signal probe"):
            return False
        probes.play(seed, win.actions[:-1] + [nudged], OFF_BY_ONE)
    return True


def _play_half_right(probes: Probes) -> bool:
    """The oracle's program, half right, on every step of a fresh episode per winning seed;
    ``False`` when the probes' deadline stopped it (nothing to play is ``True``)."""
    name = grader_hacks.source_field(probes)
    for seed, win in probes.wins.items() if name is not None else ():
        final = win.actions[-1]
        source = final.get(name)
        if not isinstance(source, str):
            return True
        if not probes.time_left("training signal probe"):
            return False
        m = grader_hacks.FUNCTION.search(source)
        half = source + HALF_RIGHT_WRAPPER.format(name=m.group(1) if m else "solve")
        probes.play(seed, [{**final, name: half}] * probes.engine.settings.max_steps, HALF_RIGHT)
    return True


def verdict(engine: ServerPlayer, oracle_reached: bool = False) -> None:
    """EK523 over the weak episodes already played (it plays nothing itself).

    Args:
        oracle_reached: the oracle reached ``hi`` of the range on some seed, only to say the
            reward is shown reachable.
    """
    found = rollouts(engine.episodes, engine.settings.hi)
    if len(found) < MIN_EPISODES:
        weak = [ep for ep in engine.episodes if is_weak(ep.policy)]
        if len(weak) >= MIN_EPISODES and not any(ep.sent_valid() for ep in weak):
            engine.skip(
                NO_TRAINING_SIGNAL,
                f"unknown: none of the {len(weak)} episodes envkit's weak policies played sent "
                "an action the environment accepted (every step refused, or a tool error)",
            )
        return
    broken = (
        reward.REWARD_NOT_NUMERIC,
        reward.REWARD_OUT_OF_RANGE,
        reward.REWARD_CONSTANT,
        integrity.REWARD_IGNORES_ACTION,
    )
    if any(engine.has(rule) for rule in broken):
        return  # the reward is broken, not sparse: those findings say why, with evidence
    engine.ran(NO_TRAINING_SIGNAL)
    lo, hi = engine.settings.lo, engine.settings.hi
    seeds = sorted({r.seed for r in found}, key=str)
    zero = "At step 0 GRPO would see every group's advantages at zero: no gradient"
    todo = (
        "Give partial credit that depends on the answer (a denser reward), an easier "
        "curriculum level, a stronger starting model, or an SFT warm-up on solved episodes."
    )
    if all(r.best <= lo + EPS for r in found):
        reached = (
            f" The oracle reaches {hi:g}, so the reward works: the task is out of reach of a "
            "weak start."
            if oracle_reached
            else ""
        )
        engine.add(
            NO_TRAINING_SIGNAL,
            "Some rollout of an untrained policy should earn reward; none of the "
            f"{len(found)} episodes envkit's weak policies played ({_policies(found)}) on "
            f"{len(seeds)} seed(s) earned a step reward above the low end {lo:g} of "
            f"`validation.reward.range`.{reached} {zero} until the model solves a task by "
            f"chance. {todo}",
            kind="no-reward",
            episodes=len(found),
            seeds=[str(s) for s in seeds],
            oracle_reached=oracle_reached,
        )
        return
    grouped = groups(found)
    if not grouped or any(max(rets) - min(rets) > EPS for rets in grouped.values()):
        return
    per_seed = ", ".join(f"seed {s}: {rets[0]:g} x{len(rets)}" for s, rets in grouped.items())
    engine.add(
        NO_TRAINING_SIGNAL,
        "Rollouts of the same seed should return different rewards; envkit's weak policies "
        f"earned reward, but every episode of a seed returned the same ({per_seed}). "
        f"{zero}. Most likely the reward depends on the task, not on the answer (a fixed "
        f"credit per question). {todo}",
        kind="no-variance",
        episodes=len(found),
        returns={str(s): rets[0] for s, rets in grouped.items()},
    )


def _policies(found: Sequence[Rollout]) -> str:
    """``fuzzed x5, degenerate x9, exploring x3``: how many episodes each kind played."""
    kinds = {
        "fuzz": "fuzzed",
        "explore": "exploring",
        "probe:wrong-value": "the oracle's form with a wrong value",
        OFF_BY_ONE: "the oracle's numbers off by one",
        HALF_RIGHT: "the oracle's program half right",
    }
    counts: dict[str, int] = {}
    for r in found:
        kind = kinds.get(r.policy, "degenerate")
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{k} x{n}" for k, n in counts.items())
