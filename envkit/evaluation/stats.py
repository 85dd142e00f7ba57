"""Statistics over finished episodes: returns, success, pass@k, latencies, histogram.

Definitions (also written into ``summary.json`` under ``definitions``):

- *step reward*: the ``reward`` of one ``step`` answer (``null`` on the wire counts as 0 and is
  counted in ``null_rewards``; OpenEnv sends NaN/inf as ``null``, docs/protocol.md).
- *episode return*: the sum of an episode's step rewards (the reset reward is not included).
- *success*: some step reward of the episode reached the manifest's maximum reward ``hi``
  (``validation.reward.range[1]``, OpenEnv RFC 008, huggingface/OpenEnv#1041).
- *pass@k* of a group of ``n`` rollouts of one seed with ``c`` successes: the unbiased
  estimator ``1 - C(n-c, k) / C(n, k)`` (Chen et al. 2021, "Evaluating Large Language Models
  Trained on Code"), averaged over groups for the summary.
- *flat group*: a group of at least 2 finished rollouts whose returns are all equal (within
  :data:`FLAT_TOLERANCE`). GRPO scores each rollout against its group's mean (Shao et al. 2024,
  "DeepSeekMath"): in a flat group every advantage is 0, so the group gives no gradient (TRL
  logs the share as ``frac_reward_zero_std``).
- *lost* episodes (their session was lost, also after the retries on fresh sessions) are no
  results: they are counted in ``lost_episodes`` and left out of every other statistic.
- standard deviations are population standard deviations (``ddof=0``); percentiles use linear
  interpolation between closest ranks (numpy's default).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Any

DEFINITIONS = {
    "step_reward": "the reward of one step answer; null on the wire counts as 0 (null_rewards "
    "counts them)",
    "return": "per-episode return = sum of the episode's step rewards (reset reward excluded)",
    "success": "an episode succeeds when some step reward reaches the maximum reward hi "
    "(validation.reward.range[1] in openenv.yaml, 1.0 without a manifest)",
    "pass_at_k": "per group of rollouts of one seed: 1 - C(n-c, k)/C(n, k) with n rollouts and "
    "c successes (unbiased estimator); `mean` averages over groups",
    "flat_groups": "groups of at least 2 finished rollouts whose returns are all equal: GRPO's "
    "advantage is 0 for each of their rollouts, so they give no gradient (TRL's "
    "frac_reward_zero_std); `fraction` = flat / groups",
    "lost_episodes": "episodes whose session was lost (also after the retries on fresh "
    "sessions): no result, left out of every other statistic; --resume plays them again",
    "invalid_actions": "steps the environment refused: a VALIDATION_ERROR frame, or a tool "
    "call answered with a tool error (an `error` in its observation; error_code TOOL_ERROR)",
    "replayed_episodes": "finished episodes played again from reset on a fresh session after "
    "their session was lost (`retries` in trajectories.jsonl); each counts its last play",
    "std": "population standard deviation (ddof=0)",
    "percentiles": "linear interpolation between closest ranks",
    "latency_s": "env_step: seconds from sending a step frame to its answer; policy: seconds "
    "the policy took to choose an action (model call included)",
}

#: Returns closer than this count as equal (sums of float step rewards).
FLAT_TOLERANCE = 1e-9
#: The share of flat groups above which :func:`flat_groups_warning` warns.
FLAT_WARN_FRACTION = 0.5


def describe(values: Sequence[float]) -> dict[str, float | int | None]:
    """``{"n", "mean", "std", "min", "max"}`` of ``values`` (population std; ``None`` when
    empty)."""
    vals = [float(v) for v in values]
    if not vals:
        return {"n": 0, "mean": None, "std": None, "min": None, "max": None}
    return {
        "n": len(vals),
        "mean": statistics.fmean(vals),
        "std": statistics.pstdev(vals),
        "min": min(vals),
        "max": max(vals),
    }


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0..100) with linear interpolation; ``None`` when empty."""
    vals = sorted(float(v) for v in values)
    if not vals:
        return None
    pos = (len(vals) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for ``n`` rollouts with ``c`` successes (``1 <= k <= n``).

    Raises:
        ValueError: ``k`` outside ``1..n`` or ``c`` outside ``0..n``.
    """
    if not 1 <= k <= n:
        raise ValueError(f"k must be in 1..{n}, got {k}")
    if not 0 <= c <= n:
        raise ValueError(f"c must be in 0..{n}, got {c}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def ks_for(group_size: int) -> list[int]:
    """The k values reported for groups of ``group_size``: powers of two and the size itself."""
    ks = {group_size}
    k = 1
    while k < group_size:
        ks.add(k)
        k *= 2
    return sorted(ks)


def histogram(
    values: Sequence[float], bins: int = 10, lo: float | None = None, hi: float | None = None
) -> list[tuple[float, float, int]]:
    """Equal-width histogram: ``[(left, right, count), ...]``; the last bin includes ``hi``.

    ``lo``/``hi`` default to the data's min/max (one bin when they are equal).
    """
    vals = [float(v) for v in values]
    if not vals:
        return []
    lo = min(vals) if lo is None else min(lo, min(vals))
    hi = max(vals) if hi is None else max(hi, max(vals))
    if hi <= lo:
        return [(lo, hi, len(vals))]
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in vals:
        idx = min(int((v - lo) / width), bins - 1)
        counts[idx] += 1
    return [(lo + i * width, lo + (i + 1) * width, counts[i]) for i in range(bins)]


def summarize(episodes: Iterable[dict[str, Any]], *, group_size: int) -> dict[str, Any]:
    """Statistics over finished episode records (the dicts written to trajectories.jsonl);
    lost ones (``"lost": true``) are only counted, in ``lost_episodes``.

    Args:
        episodes: episode records with ``group``, ``seed``, ``return``, ``success``,
            ``steps`` (each with ``reward``, ``latency_s``, ``policy_latency_s``, ``error``,
            ``parse_error``, ``usage``).
        group_size: planned rollouts per group (pass@k is computed only over complete groups
            and for ``k`` up to the group's size).

    Returns:
        The statistics part of ``summary.json``.
    """
    played = list(episodes)
    eps = sorted((e for e in played if not e.get("lost")), key=lambda e: e["episode"])
    steps = _StepTotals.of(eps)
    per_group, pass_mean, ks = _groups(eps, group_size)
    complete = [g for g in per_group if g["n"] == group_size]
    return {
        "episodes": len(eps),
        "groups": len(per_group),
        "complete_groups": len(complete),
        "return": describe([e["return"] for e in eps]),
        "step_reward": describe(steps.rewards),
        "success_rate": (sum(1 for e in eps if e["success"]) / len(eps)) if eps else None,
        "pass_at_k": {"k": ks, "mean": pass_mean, "groups": per_group},
        "flat_groups": _flat_groups(per_group),
        "mean_steps": statistics.fmean(len(e["steps"]) for e in eps) if eps else None,
        "steps": len(steps.rewards),
        "latency_s": {
            "env_step": {
                "p50": percentile(steps.env_lat, 50),
                "p95": percentile(steps.env_lat, 95),
            },
            "policy": {"p50": percentile(steps.pol_lat, 50), "p95": percentile(steps.pol_lat, 95)},
        },
        "parse_failures": steps.parse_failures,
        "invalid_actions": steps.invalid_actions,
        "null_rewards": steps.null_rewards,
        "episode_errors": sum(1 for e in eps if e.get("error")),
        "truncated_episodes": sum(1 for e in eps if e.get("truncated")),
        "lost_episodes": len(played) - len(eps),
        "replayed_episodes": sum(1 for e in eps if e.get("retries")),
        "usage": steps.usage if steps.usage_seen else None,
    }


@dataclass
class _StepTotals:
    """Counts and samples over every step of a run (see :data:`DEFINITIONS`).

    Attributes:
        rewards: each step's reward (non-finite and ``null`` counted as 0.0).
        env_lat, pol_lat: env step and policy latencies, seconds.
        parse_failures, invalid_actions, null_rewards: step counts.
        usage: summed token usage; usage_seen: some step reported usage.
    """

    rewards: list[float] = field(default_factory=list)
    env_lat: list[float] = field(default_factory=list)
    pol_lat: list[float] = field(default_factory=list)
    parse_failures: int = 0
    invalid_actions: int = 0
    null_rewards: int = 0
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    )
    usage_seen: bool = False

    @classmethod
    def of(cls, eps: list[dict[str, Any]]) -> _StepTotals:
        totals = cls()
        for e in eps:
            for s in e["steps"]:
                totals._add(s)
        return totals

    def _add(self, s: dict[str, Any]) -> None:
        if s.get("parse_error"):
            self.parse_failures += 1
        elif s.get("error") and s.get("error_code") in ("VALIDATION_ERROR", "TOOL_ERROR"):
            self.invalid_actions += 1
        r = s.get("reward")
        finite = isinstance(r, (int, float)) and not isinstance(r, bool) and math.isfinite(r)
        if not finite and not s.get("parse_error") and not s.get("error"):
            self.null_rewards += 1
        self.rewards.append(float(r) if finite else 0.0)
        if s.get("latency_s") is not None:
            self.env_lat.append(s["latency_s"])
        if s.get("policy_latency_s") is not None:
            self.pol_lat.append(s["policy_latency_s"])
        u = s.get("usage")
        if u:
            self.usage_seen = True
            for key in self.usage:
                self.usage[key] += int(u.get(key) or 0)


def _groups(
    eps: list[dict[str, Any]], group_size: int
) -> tuple[list[dict[str, Any]], dict[str, float | None], list[int]]:
    """Per-group statistics (pass@k for ``k`` up to the group's size), pass@k averaged over
    the complete groups, and the reported ``k`` values."""
    groups: dict[int, list[dict[str, Any]]] = {}
    for e in eps:
        groups.setdefault(e["group"], []).append(e)
    ks = ks_for(group_size)
    per_group = []
    for g, members in sorted(groups.items()):
        n = len(members)
        c = sum(1 for m in members if m["success"])
        per_group.append(
            {
                "group": g,
                "seed": members[0]["seed"],
                "n": n,
                "successes": c,
                "returns": [m["return"] for m in members],
                "mean_return": statistics.fmean(m["return"] for m in members),
                "flat": _is_flat([m["return"] for m in members]) if n >= 2 else None,
                "pass_at_k": {str(k): pass_at_k(n, c, k) for k in ks if k <= n},
            }
        )
    complete = [g for g in per_group if g["n"] == group_size]
    pass_mean = {
        str(k): (statistics.fmean(g["pass_at_k"][str(k)] for g in complete) if complete else None)
        for k in ks
    }
    return per_group, pass_mean, ks


def _is_flat(returns: Sequence[float]) -> bool:
    """Every return equal (within :data:`FLAT_TOLERANCE`)."""
    return max(returns) - min(returns) <= FLAT_TOLERANCE


def _flat_groups(per_group: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"flat", "groups", "fraction"}``: the flat groups among those of at least 2 finished
    rollouts (``fraction`` is ``None`` when there is none, e.g. ``--group-size 1``)."""
    judged = [g for g in per_group if g["flat"] is not None]
    flat = sum(1 for g in judged if g["flat"])
    return {
        "flat": flat,
        "groups": len(judged),
        "fraction": flat / len(judged) if judged else None,
    }


def flat_groups_warning(summary: dict[str, Any]) -> tuple[str, str] | None:
    """``(message, hint)`` when more than :data:`FLAT_WARN_FRACTION` of the groups of a
    summary (:func:`summarize`'s output) are flat: a GRPO run on these prompts would learn
    little or nothing. ``None`` otherwise, and for runs without groups of 2 or more."""
    flat = summary.get("flat_groups") or {}
    fraction = flat.get("fraction")
    if fraction is None or fraction <= FLAT_WARN_FRACTION:
        return None
    returns = {round(g["returns"][0], 9) for g in summary["pass_at_k"]["groups"] if g.get("flat")}
    same = f" (all {returns.pop():g})" if len(returns) == 1 else ""
    message = (
        f"GRPO gets no gradient from {flat['flat']} of {flat['groups']} groups: in each, every "
        f"rollout got the same return{same}."
    )
    hint = (
        "Give partial credit for progress toward the answer, use easier tasks (harder ones if "
        "every rollout succeeds) or a stronger model, and check that the reward is computed "
        "(`envkit validate`)."
    )
    return message, hint
