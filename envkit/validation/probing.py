"""What the reward-design probes share: the :class:`Probes` context (the engine, the action
schema, the oracle's wins, the probes' deadline), :func:`run` that plays them, and the helpers
several of them use on actions and episodes.

The probes ask what a trainer would learn from the reward besides the task (EK513-EK522), and
whether it learns anything at step 0 (EK523). Each rule module of :mod:`envkit.validation.rules`
holds its probe next to its rule; the order they play in is :data:`envkit.validation.runtime.REWARD_PROBES`. They run last in the order of play,
after the verdicts, on the server still running, and read what the earlier checks recorded
(:attr:`ServerPlayer.episodes`: the oracle's, fuzzed, degenerate and exploring episodes) instead
of asking the author for a plan. The oracle's actions are the reference: its winning action is
varied (near misses, wrong values in the same form, harmless rewrites) and replayed in fresh
episodes of the same seed.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from envkit.validation import fuzz
from envkit.validation.engine import EPS, Episode, ServerPlayer, is_number
from envkit.validation.offered import Offered
from envkit.wire import EnvErrorFrame

#: The share of what is left of the run's budget that the probes may take together.
PROBES_SHARE_OF_LEFT = 1 / 3
#: Action fields that hold code or identifiers, never varied as answers.
CODE_FIELD = re.compile(
    r"code|source|program|script|command|cmd|query|sql|regex|pattern|path|url|tool|name|id$",
    re.IGNORECASE,
)
#: Parts of a text kept when its value is changed or its case varied: tags, LaTeX commands.
KEPT = re.compile(r"<[^<>]*>|\\[A-Za-z]+")


@dataclass
class Probes:
    """What the probes share: the engine, the action schema, the oracle's wins by seed.

    Attributes:
        engine: the engine playing the server.
        schema: the action JSON Schema (``/schema``), ``{}`` when unavailable.
        wins: seed -> the oracle's episode, cut after its first step at the top of the range.
        deadline: ``time.monotonic()`` after which no probe starts a new episode.
        skipped: what the deadline left unplayed (for the report's notes).
        offered: the action shapes policies draw from (tool calls with each tool's
            arguments); ``None``: only ``schema``.
    """

    engine: ServerPlayer
    schema: dict[str, Any]
    wins: dict[int | None, Episode]
    deadline: float
    skipped: list[str] = field(default_factory=list)
    offered: Offered | None = None

    @property
    def play_schema(self) -> dict[str, Any]:
        """The schema policies draw from: :attr:`offered`'s, else :attr:`schema`."""
        return self.offered.play if self.offered is not None else self.schema

    @classmethod
    def read(cls, engine: ServerPlayer, offered: Offered | None = None) -> Probes:
        """What the probes need from the earlier checks: ``/schema`` again (one GET) and the
        oracle's winning episodes from :attr:`ServerPlayer.episodes`; the deadline is
        :func:`probes_budget_s`."""
        _status, body, _text = engine.get("/schema")
        action = body.get("action") if isinstance(body, dict) else None
        schema = fuzz.action_schema(action) if isinstance(action, dict) else {}
        hi = engine.settings.hi
        wins: dict[int | None, Episode] = {}
        for ep in engine.episodes:
            if ep.policy != "oracle" or ep.seed in wins:
                continue
            at = next((i for i, r in enumerate(ep.rewards) if is_number(r) and r >= hi - EPS), None)
            if at is not None:
                won = Episode(ep.seed, ep.reset_obs, ep.steps[: at + 1], True, policy="oracle")
                won.actions = ep.actions[: at + 1]
                wins[ep.seed] = won
        return cls(
            engine, schema, wins, time.monotonic() + probes_budget_s(engine), offered=offered
        )

    def time_left(self, what: str) -> bool:
        """Whether ``what`` may still start; a note says what was skipped when not."""
        if time.monotonic() < self.deadline:
            return True
        self.skipped.append(what)
        return False

    def play(
        self,
        seed: int | None,
        actions: list[dict[str, Any]],
        name: str,
        *,
        reply_s: float | None = None,
    ) -> Episode:
        """Reset with ``seed`` on a new session and send ``actions`` in order until ``done``;
        a step answered with an error frame (validation, execution) is left out. ``reply_s``:
        seconds each answer may take (default: the run's)."""
        s = self.engine.open(reply_s=reply_s)
        try:
            first = self.engine.reset(s, seed)
            ep = Episode(seed, first.observation, policy=name)
            for action in actions:
                try:
                    res = self.engine.step(s, action)
                except EnvErrorFrame as exc:
                    if exc.code == "CAPACITY_REACHED":
                        raise
                    continue
                if ep.record(res, action):
                    break
            self.engine.episodes.append(ep)  # later probes (EK513, EK515, EK518) read it too
            return ep
        finally:
            s.close()


def probes_budget_s(engine: ServerPlayer) -> float:
    """Seconds for all the probes together: a third (:data:`PROBES_SHARE_OF_LEFT`) of what is
    left of the run's budget (``--timeout``, 600 s by default) when they start.

    The probes take what they need, not a fixed share: nothing waits for the deadline (each
    probe only asks :meth:`Probes.time_left` before it starts). A fixed share was spent
    before the last probes on a busy machine, or by a grader whose every hanging submission
    runs to its own time limit, and the verdict then lacked them. The run's budget still
    bounds them, and two thirds of what is left stay for what follows (the server's stop,
    the lanes that play beside it)."""
    return engine.remaining_s() * PROBES_SHARE_OF_LEFT


#: A probe: reads and plays what it needs, records its rule with ``engine.ran``/``engine.add``.
Probe = Callable[[Probes], None]


def run(
    engine: ServerPlayer,
    probes_in_order: Sequence[tuple[str, Probe, tuple[str, ...]]],
    offered: Offered | None = None,
) -> None:
    """Play every probe of ``probes_in_order`` (``(name, probe, codes)``: the name shown when
    the probe crashes, the codes it plays for) on the server the engine plays, guarded one
    by one (a probe that fails is recorded like any check's); a probe none of whose codes
    the run wants (:meth:`ServerPlayer.wants`) is not played. Progress: the probes' bound in
    seconds, then ``reward-design probe I/N: NAME`` as each starts. Records the seconds spent
    in ``engine.timings["probes"]``.

    Args:
        offered: the run's action shapes (:func:`envkit.validation.offered.discover`).

    Raises:
        Stop: the server hung, died or the stage's budget ran out during a probe (the
            oversized-action probe reports its own hang instead).
    """
    t = time.perf_counter()
    try:
        probes = engine.guard("probe inputs", Probes.read, engine, offered, quiet=True)
        if probes is None:
            return
        played = [p for p in probes_in_order if not p[2] or engine.wants(*p[2])]
        # they may take minutes on a busy machine: the bound, then each one as it starts
        engine.progress(
            f"reward-design probes (at most {max(0.0, probes.deadline - time.monotonic()):.0f} s)"
        )
        for i, (name, check, _codes) in enumerate(played, 1):
            engine.progress(f"reward-design probe {i}/{len(played)}: {name}")
            engine.guard(name, check, probes, quiet=True)
        if probes.skipped:
            engine.out_of_time += dict.fromkeys(probes.skipped)  # in order, once each
            engine.notes.append(
                "probes: the time for the reward-design probes ran out; "
                f"not played: {', '.join(probes.skipped)}."
            )
    finally:
        engine.timings["probes"] = round(time.perf_counter() - t, 3)


# -- helpers ---------------------------------------------------------------------------------
def episode_return(ep: Episode) -> float:
    """The sum of the episode's finite numeric step rewards."""
    return sum(float(r) for r in ep.rewards if is_number(r) and math.isfinite(float(r)))


def field_schema(probes: Probes, name: str) -> dict[str, Any]:
    """The JSON Schema of the action's top-level field ``name`` (``$ref`` resolved; ``{}``
    when the schema does not declare it)."""
    props = probes.schema.get("properties") or {}
    return fuzz.resolve(props.get(name, {}), probes.schema)


def fits(node: dict[str, Any], value: object) -> bool:
    """``value`` is within the numeric bounds and length limits ``node`` declares (a JSON
    Schema node: ``enum``, ``minimum``/``maximum``, ``minLength``/``maxLength``)."""
    if isinstance(node.get("enum"), list) and value not in node["enum"]:
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):  # a JSON number
        lo, hi = node.get("minimum"), node.get("maximum")
        return not (is_number(lo) and value < lo) and not (is_number(hi) and value > hi)
    if isinstance(value, str):
        longest, shortest = node.get("maxLength"), node.get("minLength", 0)
        return len(value) >= (shortest or 0) and not (
            isinstance(longest, int) and len(value) > longest
        )
    return True


def rewrite(text: str, change: Callable[[str], str]) -> str:
    """``text`` with ``change`` applied to every part but tags and LaTeX commands."""
    out, at = [], 0
    for m in KEPT.finditer(text):
        out += [change(text[at : m.start()]), m.group()]
        at = m.end()
    return "".join(out + [change(text[at:])])


def wrong_value(text: str) -> str:
    """A different value in the same form: digits shifted by 5, letters by 13 (case kept)."""

    def shift(part: str) -> str:
        chars = []
        for c in part:
            if c.isdigit() and c.isascii():
                chars.append(str((int(c) + 5) % 10))
            elif c.isascii() and c.isalpha():
                base = ord("a") if c.islower() else ord("A")
                chars.append(chr(base + (ord(c) - base + 13) % 26))
            else:
                chars.append(c)
        return "".join(chars)

    return rewrite(text, shift)


def text_fields(probes: Probes, action: dict[str, Any]) -> list[str]:
    """Top-level fields of ``action`` holding free text (a string the schema does not
    enumerate)."""
    out = []
    for name, value in action.items():
        node = field_schema(probes, name)
        if isinstance(value, str) and value.strip() and "enum" not in node and "const" not in node:
            out.append(name)
    return out


def fmt(value: object, limit: int = 80) -> str:
    """``value`` as compact JSON for a finding's message, cut at ``limit`` characters."""
    return fuzz.short_json(value, limit)
