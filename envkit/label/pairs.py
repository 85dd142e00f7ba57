"""Which pairs of rollouts a person is asked to compare.

Only rollouts of the same seed are compared (same task, different attempts). Pairs of
identical trajectories (same actions, observations and rewards; timings ignored) are never
shown.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass

from envkit.errors import UsageError
from envkit.label.folder import EvalFolder, Trajectory

PAIR_MODES = ("all", "adjacent", "disagree")
_EPS = 1e-9


@dataclass(frozen=True)
class Pair:
    """Two rollouts of one seed; ``a`` < ``b`` (trajectory ids).

    Attributes:
        a, b: trajectory (episode) ids.
        seed: their reset seed.
        reward_tie: the environment's returns are equal (within 1e-9): the reward cannot
            tell them apart, so a human label adds the most.
    """

    a: int
    b: int
    seed: int
    reward_tie: bool

    @property
    def key(self) -> str:
        """``"<a>-<b>"``, the pair's id in URLs and the label store."""
        return f"{self.a}-{self.b}"

    def sides(self, salt: str) -> tuple[int, int]:
        """``(left_id, right_id)``: a coin flip per pair from ``salt`` (a random value kept
        in the label store), so which side is which is random yet the same on every reload."""
        flip = hashlib.sha256(f"{salt}:{self.key}".encode()).digest()[0] & 1
        return (self.b, self.a) if flip else (self.a, self.b)


def _pair(x: Trajectory, y: Trajectory) -> Pair | None:
    if x.fingerprint == y.fingerprint:
        return None
    a, b = sorted((x, y), key=lambda t: t.id)
    return Pair(a.id, b.id, a.seed, abs(a.ret - b.ret) <= _EPS)


def select_pairs(folder: EvalFolder, mode: str = "all") -> list[Pair]:
    """The pairs to label, in the order they are shown.

    Args:
        folder: the eval folder.
        mode: ``all`` (every pair within each seed's group), ``adjacent`` (one pair per
            neighbouring rollouts of a group: members 0-1, 1-2, ...), or ``disagree`` (every
            pair, those with equal returns and different text first).

    Returns:
        Pairs ordered by seed, then ids (``disagree``: reward ties first).

    Raises:
        UsageError: unknown ``mode``.
    """
    if mode not in PAIR_MODES:
        raise UsageError(
            f"--pairs {mode}: unknown pair selection.", hint=f"Use one of: {', '.join(PAIR_MODES)}."
        )
    out: list[Pair] = []
    for seed in sorted(folder.groups()):
        group = sorted(
            folder.groups()[seed], key=lambda t: (t.member if t.member is not None else t.id, t.id)
        )
        if mode == "adjacent":
            candidates = list(itertools.pairwise(group))
        else:
            candidates = list(itertools.combinations(group, 2))
        for x, y in candidates:
            p = _pair(x, y)
            if p is not None:
                out.append(p)
    if mode == "disagree":
        out.sort(key=lambda p: (not p.reward_tie, p.seed, p.a, p.b))
    return out
