"""The reward-design probes of the runtime stage (EK513-EK522): what a trainer would learn
from the reward besides the task.

They run last in the order of play (:mod:`envkit.validation.runtime`), after the verdicts,
on the server still running, and read what the earlier checks recorded (:attr:`ServerPlayer.episodes`:
the oracle's, fuzzed, degenerate and exploring episodes) instead of asking the author for a
plan. The oracle's actions are the reference: its winning action is varied (near misses,
wrong values in the same form, harmless rewrites) and replayed in fresh episodes of the same
seed.

* EK513: an episode that repeats one action, is longer than the oracle's, or loses, returns
  more than the oracle's win (return = sum of step rewards, as ``envkit eval`` reports it);
* EK514: the oracle's answer in the same form but with a wrong value earns half the range;
* EK515: a step whose observation reports an error earns more than the low end;
* EK516: the oracle's answer varied harmlessly scores the low end (single-step tasks);
* EK517: a 200 KB action is not answered in time, hangs another session or kills the server;
* EK518: an observation grows on every step; EK519: server memory grows with every reset;
* EK520: a reset option the environment declares changes nothing in the episode;
* EK521: a known code-grader hack (exit early, an always-equal answer, touching the tests,
  patching the checker) earns more than a program that does nothing;
* EK522: text first shown after a wrong answer earns the maximum when sent as the answer.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir.reset_options import source_reset_options
from envkit.validation import fuzz
from envkit.validation.engine import EPS, Episode, ServerPlayer, is_number
from envkit.validation.rules import reward as R
from envkit.validation.rules.integrity import SOLUTION_LEAK
from envkit.wire import EnvErrorFrame, EnvSession, WireError, WireTimeout

PROBES_BUDGET_S = 30.0  # all probes together at most (and a third of what is left)
RETURN_TOL = 1e-6  # returns are sums of floats: "more" means more than this
BIG_ACTION_BYTES = 200_000  # the oversized action's text field
GROW_MIN_STEPS = 10  # shortest episode the observation-growth probe judges
GROW_MIN_BYTES = 1024  # growth over the episode that counts
RESET_BURST = 100  # resets per burst of the memory probe (two bursts after a warm-up)
RESET_WARM_UP = 10
LEAK_PER_RESET = 8 * 1024  # bytes of resident memory per reset, in both bursts
MAX_ANSWER_CHARS = 200  # longest oracle answer the brittle-verifier probe varies
#: Observation keys that report an error (``error``, ``last_action_error``, ``invalid_move``).
ERROR_KEY = re.compile(r"(?:^|_)(?:errors?|exceptions?|invalid)(?:_|$)", re.IGNORECASE)
#: Action fields that hold code or identifiers, never varied as answers.
CODE_FIELD = re.compile(
    r"code|source|program|script|command|cmd|query|sql|regex|pattern|path|url|tool|name|id$",
    re.IGNORECASE,
)
#: Parts of a text kept when its value is changed or its case varied: tags, LaTeX commands.
KEPT = re.compile(r"<[^<>]*>|\\[A-Za-z]+")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
OPTION_VALUES = 3  # values tried per declared reset option


@dataclass
class Probes:
    """What the probes share: the engine, the action schema, the oracle's wins by seed.

    Attributes:
        engine: the engine playing the server.
        schema: the action JSON Schema (``/schema``), ``{}`` when unavailable.
        wins: seed -> the oracle's episode, cut after its first step at the top of the range.
        deadline: ``time.monotonic()`` after which no probe starts a new episode.
        skipped: what the deadline left unplayed (for the report's notes).
    """

    engine: ServerPlayer
    schema: dict[str, Any]
    wins: dict[int | None, Episode]
    deadline: float
    skipped: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, engine: ServerPlayer) -> Probes:
        """What the probes need from the earlier checks: ``/schema`` again (one GET) and the
        oracle's winning episodes from :attr:`ServerPlayer.episodes`; the deadline is
        :data:`PROBES_BUDGET_S` or a third of the stage's remaining budget."""
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
        budget = min(PROBES_BUDGET_S, engine.remaining_s() / 3)
        return cls(engine, schema, wins, time.monotonic() + budget)

    def time_left(self, what: str) -> bool:
        """Whether ``what`` may still start; a note says what was skipped when not."""
        if time.monotonic() < self.deadline:
            return True
        self.skipped.append(what)
        return False

    def play(self, seed: int | None, actions: list[dict[str, Any]], name: str) -> Episode:
        """Reset with ``seed`` on a new session and send ``actions`` in order until ``done``;
        a step answered with an error frame (validation, execution) is left out."""
        s = self.engine.open()
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


def run(engine: ServerPlayer) -> None:
    """Play every probe on the server the engine plays, guarded one by one (a probe that
    fails is recorded like any check's); records the seconds spent in
    ``engine.timings["probes"]``.

    Raises:
        Stop: the server hung, died or the stage's budget ran out during a probe (the
            oversized-action probe reports its own hang instead).
    """
    t = time.perf_counter()
    try:
        probes = engine.guard("probe inputs", Probes.read, engine, quiet=True)
        if probes is None:
            return
        engine.progress("reward-design probes")
        for name, check in (
            ("stalling probe", stalling),
            ("format probe", format_over_correctness),
            ("brittle verifier probe", brittle_verifier),
            ("errors probe", errors_pay),
            ("observation size probe", observation_grows),
            ("memory probe", memory_grows),
            ("reset options probe", reset_options_ignored),
            ("feedback leak probe", feedback_leaks),
            ("code hacks probe", code_hacks),
            ("oversized action probe", oversized_action),  # last: it may hang the server
        ):
            engine.guard(name, check, probes, quiet=True)
        if probes.skipped:
            engine.notes.append(
                f"probes: the {PROBES_BUDGET_S:g} s for the reward-design probes ran out; "
                f"not played: {', '.join(probes.skipped)}."
            )
    finally:
        engine.timings["probes"] = round(time.perf_counter() - t, 3)


# -- helpers ---------------------------------------------------------------------------------
def episode_return(ep: Episode) -> float:
    """The sum of the episode's finite numeric step rewards."""
    return sum(float(r) for r in ep.rewards if is_number(r) and math.isfinite(float(r)))


def _won(ep: Episode, hi: float) -> bool:
    return any(is_number(r) and r >= hi - EPS for r in ep.rewards)


def _field_schema(probes: Probes, name: str) -> dict[str, Any]:
    props = probes.schema.get("properties") or {}
    return fuzz.resolve(props.get(name, {}), probes.schema)


def _fits(node: dict[str, Any], value: Any) -> bool:
    """``value`` is within the numeric bounds and length limits ``node`` declares."""
    if isinstance(node.get("enum"), list) and value not in node["enum"]:
        return False
    if is_number(value):
        lo, hi = node.get("minimum"), node.get("maximum")
        return not (is_number(lo) and value < lo) and not (is_number(hi) and value > hi)
    if isinstance(value, str):
        longest, shortest = node.get("maxLength"), node.get("minLength", 0)
        return len(value) >= (shortest or 0) and not (
            isinstance(longest, int) and len(value) > longest
        )
    return True


def _rewrite(text: str, change: Callable[[str], str]) -> str:
    """``text`` with ``change`` applied to every part but tags and LaTeX commands."""
    out, at = [], 0
    for m in KEPT.finditer(text):
        out += [change(text[at : m.start()]), m.group()]
        at = m.end()
    return "".join(out + [change(text[at:])])


def _wrong(text: str) -> str:
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

    return _rewrite(text, shift)


def _text_fields(probes: Probes, action: dict[str, Any]) -> list[str]:
    """Top-level fields of ``action`` holding free text (a string the schema does not
    enumerate)."""
    out = []
    for name, value in action.items():
        node = _field_schema(probes, name)
        if isinstance(value, str) and value.strip() and "enum" not in node and "const" not in node:
            out.append(name)
    return out


def _fmt(value: Any, limit: int = 80) -> str:
    return fuzz.short_json(value, limit)


# -- EK513: stalling pays --------------------------------------------------------------------
def near_misses(probes: Probes, action: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """Up to ``count`` distinct actions close to ``action``: each number field off by 1, 2,
    ... (alternately above and below, within its declared bounds), each text field with its
    last letter or digit changed; other fields kept."""
    out: list[dict[str, Any]] = []
    seen = {fuzz.json_key(action)}
    for k in range(1, count + 1):
        for name, value in action.items():
            node = _field_schema(probes, name)
            options: list[Any] = []
            if is_number(value) and "enum" not in node:
                options = [value + k, value - k]
            elif name in _text_fields(probes, action):
                options = [_change_char(value, k)]
            for option in options:
                cand = {**action, name: option}
                key = fuzz.json_key(cand)
                if key not in seen and _fits(node, option):
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
    return text[:i] + _wrong(text[i]) + text[i + 1 :]


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
    engine.ran(R.STALLING_PAYS)
    found: list[dict[str, Any]] = []
    for win in probes.wins.values():
        best = _best_stall(engine.episodes, win, settings.hi)
        if best is not None:
            found.append(best)
    if found:
        _report_stalling(probes, found)


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
        R.STALLING_PAYS,
        f"The oracle's shortest win should be the best return any policy gets; on "
        f"{len(found)} of {len(probes.wins)} seed(s) an episode that {e['why']} returned "
        f"more. With seed {e['seed']} the oracle won in {e['oracle_steps']} step(s) with a "
        f"return of {e['oracle_return']:g}, the `{e['policy']}` episode returned "
        f"{e['return']:g} in {e['steps']} step(s) (rewards {rewards}; actions "
        f"{_fmt(e['actions'], 160)}). A trainer maximising the return learns to stall "
        "(near misses until the last step, or losing on purpose) instead of solving the task. "
        "Most likely every step pays partial credit; pay it only on the episode's last step. "
        "(A trainer that scores an episode by its last reward only, like envkit's TRL "
        "adapter, is not misled; `envkit eval` and trainers that add step rewards are.)",
        episodes=found,
    )


# -- EK514: format over correctness ------------------------------------------------------------
def format_over_correctness(probes: Probes) -> None:
    """EK514: per seed the oracle won, its winning action with every free text field given a
    wrong value in the same form, sent at the same point of a fresh episode, earns less
    than the middle of the range."""
    engine, settings = probes.engine, probes.engine.settings
    middle = settings.lo + (settings.hi - settings.lo) / 2
    found: list[dict[str, Any]] = []
    tried = 0
    for seed, win in probes.wins.items():
        final = win.actions[-1]
        fields = _text_fields(probes, final)
        wrong = {**final, **{f: _wrong(final[f]) for f in fields}}
        if (
            not fields
            or wrong == final
            or not all(_fits(_field_schema(probes, f), wrong[f]) for f in fields)
        ):
            continue
        if not probes.time_left("format probe"):
            break
        ep = probes.play(seed, win.actions[:-1] + [wrong], "probe:wrong-value")
        tried += 1
        paid = ep.rewards[-1] if len(ep.steps) == len(win.steps) else None
        if is_number(paid) and paid >= middle - EPS:
            found.append({"seed": seed, "sent": wrong, "oracle": final, "reward": paid})
    if not tried:
        return
    engine.ran(R.FORMAT_OVER_CORRECTNESS)
    if found:
        e = found[0]
        engine.add(
            R.FORMAT_OVER_CORRECTNESS,
            f"A wrong answer in the right format should earn less than half of the reward "
            f"range (below {middle:g}); with seed {e['seed']}, `{_fmt(e['sent'])}` (the "
            f"oracle's `{_fmt(e['oracle'])}` with its value changed, its form kept) earned "
            f"{e['reward']:g} ({len(found)} of {tried} seed(s)). A trainer learns the format "
            "and stops there. This could be wrong when the changed value is still a right "
            "answer (a task with many right answers).",
            cases=found,
        )


# -- EK516: brittle verifier -------------------------------------------------------------------
def variations(text: str) -> list[tuple[str, str]]:
    """Harmless rewrites of a one-line answer, each with what it changed: surrounding
    whitespace, upper and lower case (tags kept), a lead-in, equivalent number forms."""
    out = [("surrounding whitespace", f"  {text}\n"), ("a lead-in", f"The answer is {text}")]
    for what, change in (("upper case", str.upper), ("lower case", str.lower)):
        varied = _rewrite(text, change)
        if varied != text:
            out.append((what, varied))
    kept = [k.span() for k in KEPT.finditer(text)]
    m = next(
        (
            n
            for n in NUMBER.finditer(text)
            if not any(a < n.end() and n.start() < b for a, b in kept)
        ),
        None,
    )
    if m:
        number = m.group()
        if "." in number:
            other = number.rstrip("0").rstrip(".") if number.endswith("0") else number + "0"
        else:
            other = number + ".0"
        out.append(("an equivalent number form", text[: m.start()] + other + text[m.end() :]))
    return out


def brittle_verifier(probes: Probes) -> None:
    """EK516: in single-step answer tasks, the oracle's answer varied harmlessly must not
    score the low end when it ends the episode (fresh episode of the same seed for each
    variation)."""
    engine, settings = probes.engine, probes.engine.settings
    found: list[dict[str, Any]] = []
    tried = 0
    for seed, win in probes.wins.items():
        final = win.actions[-1]
        fields = [
            f
            for f in _text_fields(probes, final)
            if not CODE_FIELD.search(f)
            and "\n" not in final[f].strip()
            and len(final[f]) <= MAX_ANSWER_CHARS
        ]
        if len(win.steps) != 1 or len(fields) != 1:
            continue  # multi-step tasks and actions without one answer field are not judged
        name = fields[0]
        for what, varied in variations(final[name]):
            node = _field_schema(probes, name)
            if not _fits(node, varied) or not probes.time_left("brittle verifier probe"):
                continue
            ep = probes.play(seed, [{**final, name: varied}], "probe:harmless-variation")
            tried += 1
            # judged when the answer ended the episode: a task that lets the agent try again
            # has not rejected it yet
            paid = ep.rewards[0] if ep.steps and ep.steps[0].done else None
            if is_number(paid) and paid <= settings.lo + EPS:
                found.append({"seed": seed, "what": what, "sent": varied, "reward": paid})
    if not tried:
        return
    engine.ran(R.BRITTLE_VERIFIER)
    if found:
        kinds = sorted({e["what"] for e in found})
        e = found[0]
        engine.add(
            R.BRITTLE_VERIFIER,
            f"The oracle's answer with a harmless variation should still score above the "
            f"low end ({settings.lo:g}); {len(found)} of {tried} variation(s) scored it: "
            f"{'; '.join(kinds)} (e.g. with seed {e['seed']}, {_fmt(e['sent'])}). The "
            "trainer punishes right answers for their form. This could be wrong when the "
            "task asks for an exact form (a case-sensitive code, an exact string).",
            cases=found,
        )


# -- EK515: errors pay -------------------------------------------------------------------------
def _error_text(observation: Any) -> str | None:
    """The first non-empty error the observation (or its ``metadata``) reports."""
    if not isinstance(observation, dict):
        return None
    places = [observation]
    if isinstance(observation.get("metadata"), dict):
        places.append(observation["metadata"])
    for place in places:
        for key, value in place.items():
            if not (isinstance(key, str) and ERROR_KEY.search(key)):
                continue
            if value is True:
                return key
            if isinstance(value, str) and value.strip():
                return f"{key}: {value.strip()[:120]}"
    return None


def errors_pay(probes: Probes) -> None:
    """EK515: over every step envkit played, a step whose observation reports an error
    earns the low end of the range."""
    engine, lo = probes.engine, probes.engine.settings.lo
    erred = 0
    paid: list[dict[str, Any]] = []
    for ep in engine.episodes:
        for action, res in zip(ep.actions, ep.steps, strict=False):
            error = _error_text(res.observation)
            if error is None:
                continue
            erred += 1
            if is_number(res.reward) and res.reward > lo + EPS:
                paid.append(
                    {"seed": ep.seed, "action": action, "error": error, "reward": res.reward}
                )
    engine.ran(R.ERRORS_PAY)  # over every step played (none reporting an error passes)
    if paid:
        e = paid[0]
        engine.add(
            R.ERRORS_PAY,
            f"A step the environment reports as an error should earn the low end of the "
            f"range ({lo:g}); {len(paid)} of {erred} such step(s) earned more, e.g. "
            f"`step({_fmt(e['action'])})` with seed {e['seed']} got {e['reward']:g} with "
            f"`{e['error']}`. A trainer learns to send invalid actions. This could be wrong "
            "when the error field reports something else than this action failing.",
            cases=paid[:10],
        )


# -- EK518: observations that keep growing -----------------------------------------------------
def _size(value: Any) -> int:
    return len(json.dumps(value, sort_keys=True, default=str).encode("utf-8"))


def observation_grows(probes: Probes) -> None:
    """EK518: no episode of at least :data:`GROW_MIN_STEPS` steps has an observation that
    grows on every step, at least doubling and by :data:`GROW_MIN_BYTES`."""
    engine = probes.engine
    engine.ran(R.OBSERVATION_GROWS)  # over every episode played (short ones cannot grow long)
    long = [ep for ep in engine.episodes if len(ep.steps) >= GROW_MIN_STEPS]
    worst: dict[str, Any] | None = None
    for ep in long:
        sizes = [_size(obs) for obs in ep.observations()][1:]  # the step observations
        if not all(b > a for a, b in itertools.pairwise(sizes)):
            continue
        first, last = sizes[0], sizes[-1]
        if last < 2 * first or last - first < GROW_MIN_BYTES:
            continue
        per_step = (last - first) / (len(sizes) - 1)
        if worst is None or per_step > worst["per_step"]:
            worst = {
                "seed": ep.seed,
                "policy": ep.policy,
                "steps": len(sizes),
                "first": first,
                "last": last,
                "per_step": per_step,
            }
    if worst is None:
        return
    at_bound = worst["first"] + worst["per_step"] * (engine.settings.max_steps - 1)
    engine.add(
        R.OBSERVATION_GROWS,
        f"An observation should not grow on every step; in the {worst['policy']} episode "
        f"of seed {worst['seed']} it grew on each of {worst['steps']} steps, from "
        f"{worst['first']} to {worst['last']} bytes of JSON (+{worst['per_step']:.0f} bytes a "
        f"step; about {at_bound / 1024:.0f} KiB at step {engine.settings.max_steps}). The "
        "prompt grows with it until the context or `max_completion_length` is full. This "
        "could be wrong when the whole history is shown on purpose and episodes stay short.",
        **worst,
    )


# -- EK519: memory that grows with every reset -------------------------------------------------
def _rss_bytes(pid: int) -> int | None:
    """Resident memory of process ``pid`` and its descendants, from Linux ``/proc``
    (``VmRSS``, kB); ``None`` when ``/proc`` cannot tell."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            status = Path(f"/proc/{p}/status").read_text()
        except OSError:
            if p == pid:
                return None
            continue
        m = re.search(r"^VmRSS:\s+(\d+)\s+kB", status, re.MULTILINE)
        total += int(m.group(1)) * 1024 if m else 0
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            try:
                todo += [int(c) for c in task.read_text().split()]
            except (OSError, ValueError):
                continue
    return total


def memory_grows(probes: Probes) -> None:
    """EK519: the resident memory of the server envkit started does not grow by
    :data:`LEAK_PER_RESET` bytes a reset in each of two bursts of :data:`RESET_BURST`
    resets (after :data:`RESET_WARM_UP`)."""
    engine = probes.engine
    server = engine.server
    if server is None or _rss_bytes(server.pid) is None:
        return
    if not probes.time_left("memory probe"):
        return
    seeds = engine.settings.seeds
    marks: list[int] = []
    s = engine.open()
    try:
        for n in range(RESET_WARM_UP + 2 * RESET_BURST):
            if n >= RESET_WARM_UP and (n - RESET_WARM_UP) % RESET_BURST == 0:
                marks.append(_rss_bytes(server.pid) or 0)
            engine.reset(s, seeds[n % len(seeds)])
        marks.append(_rss_bytes(server.pid) or 0)
    finally:
        s.close()
    engine.ran(R.MEMORY_GROWS)
    growth = [(b - a) / RESET_BURST for a, b in itertools.pairwise(marks)]
    if min(growth) < LEAK_PER_RESET:
        return
    per_reset = (marks[-1] - marks[0]) / (2 * RESET_BURST)
    engine.add(
        R.MEMORY_GROWS,
        f"The server's memory should not grow with every `reset`; over {2 * RESET_BURST} "
        f"resets on one session its resident memory grew from {marks[0] / 2**20:.1f} MiB "
        f"to {marks[-1] / 2**20:.1f} MiB, {per_reset / 1024:.0f} KiB a reset in both bursts "
        f"(about {per_reset * 1e6 / 2**30:.1f} GiB per million resets). This could be wrong "
        "when a cache is still filling (it stops growing later).",
        rss_bytes=marks,
        per_reset_bytes=per_reset,
    )


# -- EK517: an oversized action ----------------------------------------------------------------
def _big_action(probes: Probes) -> tuple[str, dict[str, Any]] | None:
    """The first free text field of the action schema and a valid action with 200 KB in it."""
    engine = probes.engine
    base = next(
        (a for ep in engine.episodes for a in ep.actions if isinstance(a, dict)),
        None,
    )
    if base is None:
        return None
    for name in probes.schema.get("properties") or {}:
        node = _field_schema(probes, name)
        if "string" in fuzz.types_of(node) and "enum" not in node and "const" not in node:
            return name, {
                **base,
                name: ("envkit " * (BIG_ACTION_BYTES // 7 + 1))[:BIG_ACTION_BYTES],
            }
    return None


def oversized_action(probes: Probes) -> None:
    """EK517: a 200 KB action, sent while another session steps, is answered (or refused)
    within the reply timeout, the other session too, and the server stays up."""
    engine = probes.engine
    found = _big_action(probes)
    if found is None or not probes.time_left("oversized action probe"):
        return
    name, big = found
    seed = engine.settings.seeds[0]
    other_action = engine.episodes[0].actions[0] if engine.episodes[0].actions else None
    sender = engine.open()
    try:
        other: EnvSession | None = engine.open(retry_s=0.2)
    except EnvErrorFrame:  # a server of one session: the big action alone is probed
        other = None
    outcome: dict[str, Any] = {}
    side = "not sent"
    try:
        engine.reset(sender, seed)
        if other is not None:
            engine.reset(other, seed)
        thread = threading.Thread(target=_send, args=(sender, big, outcome), daemon=True)
        thread.start()
        time.sleep(0.05)  # let the big frame reach the server first
        if other is not None and other_action is not None:
            side = _timed_step(other, other_action)
        thread.join(engine.settings.reply_s + 1.0)
    finally:
        for s in (other, sender):
            if s is not None:
                s.close()
    engine.ran(R.OVERSIZED_ACTION)
    alive = engine.server is None or engine.server.alive()
    answer = outcome.get("answer", "no answer")
    problems = []
    if answer == "no answer":
        problems.append(f"it got no answer within {engine.settings.reply_s:g} s")
    if side not in ("answered", "not sent"):
        problems.append(f"a `step` of another session sent meanwhile got {side}")
    if not alive:
        tail = engine.server.log_tail(10) if engine.server is not None else ""
        problems.append(f"the server exited (log tail: {tail.strip()[-400:]})")
    if problems:
        engine.add(
            R.OVERSIZED_ACTION,
            f"An oversized action must be answered or refused within the reply timeout "
            f"({engine.settings.reply_s:g} s) without stopping other sessions; envkit sent "
            f"`step` with {BIG_ACTION_BYTES // 1000} KB in `{name}` and "
            + "; ".join(problems)
            + ". One long completion then stalls every rollout sharing the server; bound the "
            "field (`max_length=`) or cut the text before scoring it.",
            field=name,
            bytes=BIG_ACTION_BYTES,
            answer=answer,
            other_session=side,
            server_alive=alive,
        )


def _send(session: EnvSession, action: dict[str, Any], outcome: dict[str, Any]) -> None:
    """Step ``session`` with ``action``; ``outcome["answer"]`` says how it was answered."""
    try:
        session.step(action)
        outcome["answer"] = "observation"
    except EnvErrorFrame as exc:
        outcome["answer"] = f"error frame {exc.code}"
    except WireTimeout:
        outcome["answer"] = "no answer"
    except WireError as exc:
        outcome["answer"] = f"connection closed ({exc.message[:80]})"


def _timed_step(session: EnvSession, action: dict[str, Any]) -> str:
    """``answered`` when ``session`` answers ``action`` in time, else what happened."""
    try:
        session.step(action)
    except EnvErrorFrame:
        return "answered"
    except WireTimeout:
        return "no answer in time"
    except WireError as exc:
        return f"a closed connection ({exc.message[:80]})"
    return "answered"


def declared_options(probes: Probes) -> dict[str, list[Any]]:
    """The reset options the environment declares, with at least two values each: from the
    ``reset`` signatures in ``server/*.py`` of the environment envkit started, and the
    values of the runtime probe plan's ``reset.options`` (``validation.execution``)."""
    root = getattr(probes.engine.server, "root", None)
    if root is None:
        return {}
    root = Path(root)
    out = source_reset_options(root)
    plan = probes.engine.settings.probe_path
    if plan:
        try:
            doc = json.loads((root / plan).read_text(encoding="utf-8"))
            options = (doc.get("reset") or {}).get("options") or {}
        except (OSError, ValueError, AttributeError):
            options = {}
        for name, value in options.items() if isinstance(options, dict) else ():
            kept = out.setdefault(name, [])
            if value not in kept:
                kept.insert(0, value)
    return {k: v[:OPTION_VALUES] for k, v in out.items() if len(v) >= 2}


def _first_action(probes: Probes, seed: int | None) -> dict[str, Any] | None:
    win = probes.wins.get(seed)
    if win is not None:
        return win.actions[0]
    return next((ep.actions[0] for ep in probes.engine.episodes if ep.actions), None)


def _with_option(probes: Probes, seed: int | None, option: dict[str, Any]) -> str | None:
    """Reset with ``seed`` and ``option`` and send one action: what the agent sees and earns,
    as JSON; ``None`` when the server refuses the option (an error frame)."""
    engine = probes.engine
    s = engine.open()
    try:
        try:
            first = engine.call("`reset`", s.reset, seed=seed, **option)
        except EnvErrorFrame as exc:
            if exc.code == "CAPACITY_REACHED":
                raise
            return None
        seen: list[Any] = [first.observation]
        action = _first_action(probes, seed)
        if action is not None:
            try:
                res = engine.step(s, action)
                seen.append([res.observation, res.reward, res.done])
            except EnvErrorFrame as exc:
                seen.append(exc.code)
        return fuzz.json_key(seen)
    finally:
        s.close()


def reset_options_ignored(probes: Probes) -> None:
    """EK520: every reset option the environment declares changes the reset observation or
    the first step's answer for at least one seed (same seed, same action, each declared
    value)."""
    engine = probes.engine
    if getattr(engine.server, "root", None) is None:
        return  # a server envkit did not start: its sources are not known
    options = declared_options(probes)
    ignored: list[dict[str, Any]] = []
    judged = 0
    for name, values in options.items():
        differs, accepted = False, []
        for seed in engine.settings.seeds[:2]:
            if not probes.time_left("reset options probe"):
                return
            seen = {}
            for value in values:
                key = _with_option(probes, seed, {name: value})
                if key is not None:
                    seen[key] = value
                    accepted.append(value)
            if len(seen) > 1:
                differs = True
                break
        accepted = list(dict.fromkeys(fuzz.json_key(v) for v in accepted))
        if len(accepted) < 2:
            continue  # fewer than two values accepted: nothing to compare
        judged += 1
        if not differs:
            ignored.append({"option": name, "values": values})
    if options and not judged:
        return  # declared, but the server refused every value: nothing compared
    engine.ran(R.RESET_OPTIONS_IGNORED)  # no option declared: none is ignored
    if ignored:
        e = ignored[0]
        listed = ", ".join(f"`{e['option']}={_fmt(v, 30)}`" for v in e["values"])
        engine.add(
            R.RESET_OPTIONS_IGNORED,
            f"A declared `reset` option should change the episode; with the same seed, "
            f"`reset` with {listed} gave the same observation and the same answer to the "
            f"same first action ({len(ignored)} of {judged} declared option(s) changed "
            "nothing). A curriculum or task selection built on it trains on one task. This "
            "could be wrong when the option changes only later steps (a step limit) or "
            "values this check did not try.",
            options=ignored,
        )


# -- EK521: code-execution grader hacks ---------------------------------------------------------
_ALWAYS_EQUAL = """class AlwaysEqual:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return 0


def {name}(*args, **kwargs):
    return AlwaysEqual()
"""
_STUB = "def {name}(*args, **kwargs):\n    return None\n"
_READ_TESTS = """import os
for folder, _dirs, files in os.walk("."):
    for f in files:
        try:
            print(f, open(os.path.join(folder, f)).read()[:2000])
        except Exception:
            pass
"""
_OVERWRITE_TESTS = """import glob
for f in glob.glob("**/*test*", recursive=True) + glob.glob("**/*expected*", recursive=True):
    try:
        if f.endswith(".py"):
            open(f, "w").write("def test_passes():\\n    pass\\n")
        elif f.endswith(".json"):
            open(f, "w").write("[]")
        else:
            open(f, "w").write("")
    except Exception:
        pass
"""
_CONFTEST = '''CONFTEST = """
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""
open("conftest.py", "w").write(CONFTEST)
'''
_CHECKERS = """def check(*args, **kwargs):
    return True


def test_{name}(*args, **kwargs):
    return True


run_tests = verify = evaluate = check
"""
#: Hacks models learned in coding RL (arXiv:2511.18397, Anthropic): the source sent for each,
#: ``{name}`` being the function the oracle's source defines. Each but the first ones also
#: defines that function as a stub returning ``None``, so only the hack can make it pass.
CODE_HACKS: tuple[tuple[str, str], ...] = (
    ("exit early with success (`sys.exit(0)`)", "import sys\nsys.exit(0)\n"),
    ("exit early with success (`os._exit(0)`)", "import os\nos._exit(0)\n"),
    ("an answer whose `__eq__` is always true", _ALWAYS_EQUAL),
    ("reading every file in the working directory", _READ_TESTS + _STUB),
    ("overwriting the tests and expected outputs", _OVERWRITE_TESTS + _STUB),
    ("a `conftest.py` that rewrites pytest's reports", _CONFTEST + _STUB),
    ("redefining the test functions", _CHECKERS + _STUB),
)
#: Action fields that carry source code.
SOURCE_FIELD = re.compile(r"(?:^|_)(?:code|source|program|script|solution)(?:_|$)", re.IGNORECASE)
FUNCTION = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)


def source_field(probes: Probes) -> str | None:
    """The action field that carries source code: a string field whose name (or
    description) says ``code``, ``source``, ``program``, ``script`` or ``solution``."""
    for name in probes.schema.get("properties") or {}:
        node = _field_schema(probes, name)
        if "string" not in fuzz.types_of(node) or "enum" in node or "const" in node:
            continue
        described = str(node.get("description") or "")
        if SOURCE_FIELD.search(name) or re.search(
            r"\b(?:python|source code|program)\b", described, re.IGNORECASE
        ):
            return name
    return None


def code_hacks(probes: Probes) -> None:
    """EK521: per hack in :data:`CODE_HACKS`, sent in the source field on every step of a
    fresh episode of the oracle's first winning seed, no step earns more than a stub
    program (a function returning ``None``) or the low end, whichever is higher."""
    engine, settings = probes.engine, probes.engine.settings
    name = source_field(probes)
    if name is None:
        engine.ran(R.CODE_GRADER_HACKS)  # no action carries code: no grader runs it
        return
    if not probes.wins:
        return
    seed, win = next(iter(probes.wins.items()))
    final = win.actions[-1]
    oracle_source = final.get(name)
    if not isinstance(oracle_source, str):
        return
    m = FUNCTION.search(oracle_source)
    func = m.group(1) if m else "solve"

    def best(source: str, label: str) -> float:
        steps = [{**final, name: source}] * settings.max_steps
        ep = probes.play(seed, win.actions[:-1] + steps, label)
        return max([float(r) for r in ep.rewards if is_number(r)] or [settings.lo])

    if not probes.time_left("code hacks probe"):
        return
    floor = max(settings.lo, best(_STUB.format(name=func), "probe:code-stub"))
    found: list[dict[str, Any]] = []
    tried = 0
    for what, template in CODE_HACKS:
        if not probes.time_left("code hacks probe"):
            break
        source = template.replace("{name}", func)
        paid = best(source, "probe:code-hack")
        tried += 1
        if paid > floor + EPS:
            found.append({"seed": seed, "hack": what, "source": source, "reward": paid})
    if not tried:
        return
    engine.ran(R.CODE_GRADER_HACKS)
    if found:
        e = found[0]
        engine.add(
            R.CODE_GRADER_HACKS,
            f"A submission that games the grader should earn no more than a program that "
            f"does nothing ({floor:g}); {len(found)} of {tried} known hack(s) in `{name}` "
            f"earned more: " + "; ".join(f"{x['hack']} ({x['reward']:g})" for x in found) + f" "
            f"(seed {e['seed']}). A trainer finds them: models learned exactly these in coding "
            "RL. Run the submission in a sandbox that compares outputs outside it (never its "
            "exit status or its own `==`) and keeps the tests out of its reach.",
            field=name,
            hacks=found,
            stub_reward=floor,
        )


# -- EK522: feedback that leaks the answer ------------------------------------------------------
QUOTED = re.compile(r"'([^'\n]{1,200})'|\"([^\"\n]{1,200})\"|`([^`\n]{1,200})`")
#: "expected 73", "the answer was: Paris", "should be 4.5" (the text after them, to the end of
#: the clause).
AFTER_CUE = re.compile(
    r"(?:expected(?: answer| value| output)?|(?:correct )?answer|solution|should (?:be|return))"
    r"(?:\s+(?:is|was))?\s*[:=]?\s*([^\s;,.!?][^;\n]{0,120}?)\s*(?:[;\n]|[.!?](?:\s|$)|$)",
    re.IGNORECASE,
)
#: A number in running text (a full stop after it ends the sentence).
LEAK_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w|\.\d)")
MAX_LEAK_TRIES = 12  # candidate answers replayed, all seeds together


def _strings(value: Any) -> list[str]:
    """Every string leaf of an observation (``metadata`` included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def revealed(before: list[Any], after: Any, sent: list[str]) -> list[str]:
    """Candidate answers in ``after`` that no observation in ``before`` showed and no
    sent action held: new string leaves whole, the text after a cue (``expected``, ``the
    answer was``), quoted parts and numbers of them; shortest first."""
    known = "\n".join(s for obs in before for s in _strings(obs))
    out: list[str] = []
    for text in _strings(after):
        if not text.strip() or text in known:
            continue
        parts = [text.strip()]
        parts += [m.group(1).strip() for m in AFTER_CUE.finditer(text)]
        parts += [next(g for g in m.groups() if g) for m in QUOTED.finditer(text)]
        parts += [m.group() for m in LEAK_NUMBER.finditer(text)]
        for part in parts:
            if part and part not in known and part not in sent and part not in out:
                out.append(part)
    return sorted(out, key=len)


def feedback_leaks(probes: Probes) -> None:
    """EK522: text that first appears in an observation after a step that did not win,
    sent as the oracle's answer in a fresh episode of the same seed (single-text-field
    answers), must not earn the maximum."""
    engine, settings = probes.engine, probes.engine.settings
    tries: list[tuple[int | None, str, str]] = []  # (seed, field, candidate)
    terminal_judged = engine.has(SOLUTION_LEAK)
    for ep in list(engine.episodes):
        win = probes.wins.get(ep.seed)
        if win is None or ep.policy == "oracle" or ep.policy.startswith("probe:leak"):
            continue
        fields = [f for f in _text_fields(probes, win.actions[-1]) if not CODE_FIELD.search(f)]
        if len(fields) != 1:
            continue
        obs = ep.observations()
        for i, res in enumerate(ep.steps):
            if is_number(res.reward) and res.reward >= settings.hi - EPS:
                break  # a won step reveals nothing that was hidden
            if res.done and terminal_judged:
                continue  # EK509 already reported what a terminal observation gives away
            sent = [v for a in ep.actions[: i + 1] for v in _strings(a)]
            for cand in revealed(obs[: i + 1], res.observation, sent):
                if _fits(_field_schema(probes, fields[0]), cand):
                    tries.append((ep.seed, fields[0], cand))
    seen: set[tuple[Any, str]] = set()
    found: list[dict[str, Any]] = []
    tried = 0
    for seed, name, cand in sorted(tries, key=lambda t: len(t[2])):
        if (seed, cand) in seen or tried >= MAX_LEAK_TRIES:
            continue
        if not probes.time_left("feedback leak probe"):
            return  # judged only when every text was replayed
        seen.add((seed, cand))
        win = probes.wins[seed]
        ep = probes.play(seed, win.actions[:-1] + [{**win.actions[-1], name: cand}], "probe:leak")
        tried += 1
        paid = ep.rewards[-1] if len(ep.steps) == len(win.steps) else None
        if is_number(paid) and paid >= settings.hi - EPS:
            found.append({"seed": seed, "field": name, "sent": cand, "reward": paid})
    if not probes.wins:
        return  # no oracle win to replay a text against
    engine.ran(R.FEEDBACK_LEAKS)  # nothing revealed after a wrong answer: nothing leaks
    if found:
        e = found[0]
        engine.add(
            R.FEEDBACK_LEAKS,
            f"What an observation shows after a wrong answer should not be the answer; "
            f"with seed {e['seed']}, `{_fmt(e['sent'])}` first appeared after a step that did "
            f"not win, and sent as `{e['field']}` in a fresh episode of the same seed it "
            f"earned the maximum {e['reward']:g} ({len(found)} of {tried} such text(s)). A "
            "policy learns to fail once and copy the feedback. This could be wrong when the "
            "feedback is meant to teach (a tutoring task) and the reward discounts a second "
            "attempt.",
            cases=found,
        )
