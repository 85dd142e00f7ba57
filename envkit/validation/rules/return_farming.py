"""EK513 stalling pays: an episode that repeats one action, is longer than the oracle's, or
loses returns more than the oracle's win (return = sum of step rewards, as ``envkit eval``
reports it). The trainer maximising the return farms partial credit instead of solving the task.
"""

from __future__ import annotations

from typing import Any

from envkit.findings import Severity, register
from envkit.validation import fuzz
from envkit.validation.engine import EPS, Episode, is_number
from envkit.validation.probing import (
    Probes,
    episode_return,
    field_schema,
    fits,
    fmt,
    text_fields,
    wrong_value,
)

STALLING_PAYS = register(
    "EK513",
    "stalling-pays",
    Severity.ERROR,
    summary="Repeating one action, taking longer, or losing returns more than the oracle's "
    "shortest win.",
    what="For every seed the declared oracle wins, envkit compares the oracle's return (the "
    "sum of its step rewards, what `envkit eval` reports) with the return of every other "
    "episode it played on that seed: fuzzed, degenerate (one action repeated) and "
    "exploring episodes, plus two it plays for this check: the oracle's actions with "
    "near misses of its winning action (numbers off by one, a letter changed) sent "
    "before the win, and the oracle's first action repeated. An episode that is longer "
    "than the oracle's, does not win, or repeats one action must not return more.",
    why="A trainer maximises the return. When partial rewards add up over the steps, the "
    "policy learns to stall: to send near misses until the episode's last step, or to "
    "lose on purpose, instead of solving the task at once.",
    example="A guessing game paying 0.5 x closeness on every guess and 1.0 for a hit: "
    "seven near misses and a hit return 4.4, the oracle's quick win 2.8.",
    fix="Pay partial credit only on the episode's last step (a win pays the maximum), or "
    "make the reward of a step the improvement over the best so far; then no episode "
    "returns more than the quickest win.",
    limits="Shaping paid for moving closer and not taken back for moving away (not "
    "potential-based) is not seen: no policy tried steps away from the goal and back.",
    classes=("BGW-107", "BGW-122"),
)

RETURN_TOL = 1e-6  # returns are sums of floats: "more" means more than this


def near_misses(probes: Probes, action: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """Up to ``count`` distinct actions close to ``action``: each number field off by 1, 2,
    ... (alternately above and below, within its declared bounds), each text field with its
    last letter or digit changed; other fields kept."""
    out: list[dict[str, Any]] = []
    seen = {fuzz.json_key(action)}
    for k in range(1, count + 1):
        for name, value in action.items():
            node = field_schema(probes, name)
            options: list[Any] = []
            if is_number(value) and "enum" not in node:
                options = [value + k, value - k]
            elif name in text_fields(probes, action):
                options = [_change_char(value, k)]
            for option in options:
                cand = {**action, name: option}
                key = fuzz.json_key(cand)
                if key not in seen and fits(node, option):
                    seen.add(key)
                    out.append(cand)
                if len(out) >= count:
                    return out
        if not out and k > 2:
            break
    return out


def _change_char(text: str, k: int) -> str:
    """``text`` with its ``k``-th last letter or digit replaced by another of its kind."""
    spots = [i for i, c in enumerate(text) if c.isascii() and c.isalnum()]
    if not spots:
        return text + "x" * k
    i = spots[-1 - (k - 1) % len(spots)]
    return text[:i] + wrong_value(text[i]) + text[i + 1 :]


def stalling(probes: Probes) -> None:
    """EK513: per seed the oracle won, no episode that is longer, loses, or repeats one
    action returns more than the oracle's win (it plays two such episodes itself)."""
    engine, settings = probes.engine, probes.engine.settings
    if not probes.wins:
        return
    for seed, win in probes.wins.items():
        if not probes.time_left("stalling episodes"):
            break
        room = settings.max_steps - len(win.actions)
        stall = near_misses(probes, win.actions[-1], room)
        if stall:
            probes.play(seed, win.actions[:-1] + stall + win.actions[-1:], "stall:near-misses")
        first = win.actions[0]
        probes.play(seed, [first] * settings.max_steps, "stall:repeat-oracle-first")
    engine.ran(STALLING_PAYS)
    found: list[dict[str, Any]] = []
    for win in probes.wins.values():
        best = _best_stall(engine.episodes, win, settings.hi)
        if best is not None:
            found.append(best)
    if found:
        _report_stalling(probes, found)


def _won(ep: Episode, hi: float) -> bool:
    return any(is_number(r) and r >= hi - EPS for r in ep.rewards)


def _best_stall(episodes: list[Episode], win: Episode, hi: float) -> dict[str, Any] | None:
    """The episode of ``win``'s seed that out-returns it most while longer, lost, or one
    action repeated (``None``: none does)."""
    best: dict[str, Any] | None = None
    target = episode_return(win)
    for ep in episodes:
        if ep.seed != win.seed or ep.policy == "oracle" or not ep.steps:
            continue
        repeated = len({fuzz.json_key(a) for a in ep.actions}) == 1 and len(ep.actions) > 1
        won = _won(ep, hi)
        why = (
            "repeats one action"
            if repeated
            else "does not win"
            if not won
            else "is longer"
            if len(ep.steps) > len(win.steps)
            else None
        )
        total = episode_return(ep)
        if why is None or total <= target + RETURN_TOL:
            continue
        if best is None or total > best["return"]:
            best = {
                "seed": win.seed,
                "policy": ep.policy,
                "why": why,
                "return": total,
                "steps": len(ep.steps),
                "actions": ep.actions,
                "rewards": ep.rewards,
                "oracle_return": target,
                "oracle_steps": len(win.steps),
            }
    return best


def _report_stalling(probes: Probes, found: list[dict[str, Any]]) -> None:
    e = max(found, key=lambda x: x["return"] - x["oracle_return"])
    rewards = ", ".join(f"{r:g}" if is_number(r) else str(r) for r in e["rewards"][:12])
    probes.engine.add(
        STALLING_PAYS,
        f"The oracle's shortest win should be the best return any policy gets; on "
        f"{len(found)} of {len(probes.wins)} seed(s) an episode that {e['why']} returned "
        f"more. With seed {e['seed']} the oracle won in {e['oracle_steps']} step(s) with a "
        f"return of {e['oracle_return']:g}, the `{e['policy']}` episode returned "
        f"{e['return']:g} in {e['steps']} step(s) (rewards {rewards}; actions "
        f"{fmt(e['actions'], 160)}). A trainer maximising the return learns to stall "
        "(near misses until the last step, or losing on purpose) instead of solving the task. "
        "Most likely every step pays partial credit; pay it only on the episode's last step. "
        "(A trainer that scores an episode by its last reward only, like envkit's TRL "
        "adapter, is not misled; `envkit eval` and trainers that add step rewards are.)",
        episodes=found,
    )
