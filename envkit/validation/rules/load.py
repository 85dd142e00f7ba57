"""What long training runs do to the server (EK517-EK519):

* EK517: a 200 KB action is not answered in time, hangs another session or kills the server;
* EK518: an observation grows on every step;
* EK519: server memory grows with every reset.
"""

from __future__ import annotations

import functools
import itertools
import json
import random
import re
import string
import threading
import time
from pathlib import Path
from typing import Any

from envkit.findings import Severity, register
from envkit.validation import fuzz
from envkit.validation.engine import Episode
from envkit.validation.probing import Probes, field_schema
from envkit.wire import EnvErrorFrame, EnvSession, WireError, WireTimeout

OVERSIZED_ACTION = register(
    "EK517",
    "oversized-action-hangs",
    Severity.ERROR,
    summary="A 200 KB action is not answered or refused within the reply timeout, hangs "
    "another session, or kills the server.",
    what="envkit sends one action whose first free text field holds 200 KB while another "
    "session steps. Both must be answered (an observation or an error frame; a closed "
    "connection counts as a refusal) within the reply timeout, and the server must "
    "stay up.",
    why="A policy emits long completions sooner or later (repetition loops up to "
    "`max_completion_length`); a step that takes minutes or crashes on one of them "
    "stalls every rollout of the batch that shares the server.",
    example="An edit-distance reward over the whole answer (quadratic time), a regex with "
    "catastrophic backtracking, `step` running the answer synchronously.",
    fix="Bound the field (`max_length=` on the action model: the server refuses longer "
    "ones with a validation error) or cut the text before scoring it.",
)

OBSERVATION_GROWS = register(
    "EK518",
    "observation-grows",
    Severity.WARNING,
    summary="An observation's serialized size grows on every step of an episode.",
    what="envkit measures the JSON size of every observation of the episodes it played; "
    "an episode of at least 6 steps (not one of the fuzzed actions, whose length is "
    "random) whose observation grows on every step (the last "
    "one of a finished episode may shrink) and at least doubles from its first step is "
    "reported with the bytes per step and the size it reaches at `envkit.max_steps`. "
    "Heuristic: what separates a history that grows without bound from a short one "
    "shown on purpose is the trend, not the size reached in the short episodes envkit "
    "plays: growth on every step that makes the history most of the observation. A "
    "history beside a larger task (a list of earlier guesses, tool calls next to the "
    "tools' schemas) grows by less than the observation's own size and stays quiet.",
    why="The observation is appended to the prompt on every step: a growing one fills the "
    "context, and tool results past `max_completion_length` are dropped by TRL after "
    "the environment saw the action.",
    example="`observation.history` holding every earlier step with its full output.",
    fix="Show the last few steps, or a summary, instead of the whole history.",
    limits="Episodes under 6 steps are not judged, nor a history that does not at least double "
    "the observation within the episode (a list of 5-byte scores beside a question over 8 "
    "steps): a short history the task shows is common, and a list of earlier guesses "
    "looks the same.",
)

MEMORY_GROWS = register(
    "EK519",
    "memory-grows-per-reset",
    Severity.WARNING,
    summary="The server's memory grows with every `reset`.",
    what="When envkit started the server, it measures the resident memory of the server's "
    "processes (Linux `/proc`) before and after two bursts of `reset` calls on one "
    "session; memory growing in both bursts by at least 8 KiB a reset is reported "
    "with the growth per reset. Heuristic: caches that fill once (a dataset loaded "
    "lazily, the allocator's pools) grow too, but stop growing.",
    why="A training run resets millions of times: a leak of a few KB per reset ends with "
    "the Space killed for memory hours into the run.",
    example="`reset` appending the episode to a module-level list, or opening a file or "
    "subprocess it never closes.",
    fix="Keep per-episode data on the instance and replace it on `reset`; close what "
    "`reset` opens.",
    limits="Under 8 KB of resident memory per reset (a 2 KB record kept per episode) is not seen"
    " over the probe's 200 resets.",
)

BIG_ACTION_BYTES = 200_000  # the oversized action's text field
GROW_MIN_STEPS = 6  # shortest episode the observation-growth probe judges
GROW_FACTOR = 2.0  # last size / first step's size that counts: the history is most of it
#: Episodes played with the fuzzed actions (random text of random length, up to kilobytes):
#: an observation that shows the agent's arguments back grows by whatever the fuzzer sent,
#: so the growth EK518 judges is the other policies' (oracle, degenerate, exploring, probes).
FUZZED_POLICIES = frozenset({"fuzz", "determinism", "seed control"})
RESET_BURST = 100  # resets per burst of the memory probe (two bursts after a warm-up)
RESET_WARM_UP = 10
LEAK_PER_RESET = 8 * 1024  # bytes of resident memory per reset, in both bursts


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
        node = field_schema(probes, name)
        if "string" in fuzz.types_of(node) and "enum" not in node and "const" not in node:
            return name, {**base, name: long_text(BIG_ACTION_BYTES)}
    return None


@functools.lru_cache(maxsize=4)
def long_text(size: int, seed: int = 517) -> str:
    """``size`` characters of lowercase words (3-9 letters) drawn from ``seed``: a long
    completion is varied text, and a grader whose cost grows with distinct content (seen
    n-grams kept in a list, a regex over new tokens) is slow only on varied text, not on one
    word repeated. The letters are drawn in one call (a draw per letter was a quarter of a
    validate run's own CPU time), and the text is kept: the same arguments give the same
    text."""
    rng = random.Random(seed)
    letters = "".join(rng.choices(string.ascii_lowercase, k=size))
    words: list[str] = []
    start = 0
    while start < size:
        end = start + rng.randint(3, 9)
        words.append(letters[start:end])
        start = end + 1  # the letter a space replaces
    return " ".join(words)[:size]


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
    engine.ran(OVERSIZED_ACTION)
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
            OVERSIZED_ACTION,
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


# -- EK518: observations that keep growing -----------------------------------------------------
def _size(value: object) -> int:
    """Bytes of ``value`` as JSON (UTF-8, keys sorted)."""
    return len(json.dumps(value, sort_keys=True, default=str).encode("utf-8"))


def _growing(ep: Episode) -> list[int] | None:
    """The JSON sizes of ``ep``'s step observations when they grow on every step (the last
    one of a finished episode may shrink: it often drops the task) and at least
    :data:`GROW_FACTOR`-fold over at least :data:`GROW_MIN_STEPS` steps; else ``None``."""
    sizes = [_size(obs) for obs in ep.observations()][1:]  # the step observations
    if ep.done and len(sizes) > 1 and sizes[-1] <= sizes[-2]:
        sizes = sizes[:-1]
    if len(sizes) < GROW_MIN_STEPS or not all(b > a for a, b in itertools.pairwise(sizes)):
        return None
    return sizes if sizes[-1] >= GROW_FACTOR * sizes[0] else None


def _amount(size: float) -> str:
    """``size`` bytes for a message: bytes under 10 KiB, else KiB."""
    return f"{size:.0f} bytes" if size < 10 * 1024 else f"{size / 1024:.0f} KiB"


def observation_grows(probes: Probes) -> None:
    """EK518: no episode of at least :data:`GROW_MIN_STEPS` steps has an observation that
    grows on every step and at least :data:`GROW_FACTOR`-fold (:func:`_growing`)."""
    engine = probes.engine
    engine.ran(OBSERVATION_GROWS)  # over every episode played (short ones cannot grow long)
    worst: dict[str, Any] | None = None
    for ep in engine.episodes:
        sizes = None if ep.policy in FUZZED_POLICIES else _growing(ep)
        if sizes is None:
            continue
        per_step = (sizes[-1] - sizes[0]) / (len(sizes) - 1)
        if worst is None or per_step > worst["per_step"]:
            worst = {
                "seed": ep.seed,
                "policy": ep.policy,
                "steps": len(sizes),
                "first": sizes[0],
                "last": sizes[-1],
                "per_step": per_step,
            }
    if worst is None:
        return
    at_bound = worst["first"] + worst["per_step"] * (engine.settings.max_steps - 1)
    engine.add(
        OBSERVATION_GROWS,
        f"An observation should not grow on every step; in the {worst['policy']} episode "
        f"of seed {worst['seed']} it grew on each of {worst['steps']} steps, from "
        f"{worst['first']} to {worst['last']} bytes of JSON (+{worst['per_step']:.0f} bytes a "
        f"step; about {_amount(at_bound)} at step {engine.settings.max_steps}). The "
        "prompt grows with it until the context or `max_completion_length` is full, and "
        "each step re-sends what the conversation already holds. This could be wrong when "
        "the whole history is shown on purpose and episodes stay short.",
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
    engine.ran(MEMORY_GROWS)
    growth = [(b - a) / RESET_BURST for a, b in itertools.pairwise(marks)]
    if min(growth) < LEAK_PER_RESET:
        return
    per_reset = (marks[-1] - marks[0]) / (2 * RESET_BURST)
    engine.add(
        MEMORY_GROWS,
        f"The server's memory should not grow with every `reset`; over {2 * RESET_BURST} "
        f"resets on one session its resident memory grew from {marks[0] / 2**20:.1f} MiB "
        f"to {marks[-1] / 2**20:.1f} MiB, {per_reset / 1024:.0f} KiB a reset in both bursts "
        f"(about {per_reset * 1e6 / 2**30:.1f} GiB per million resets). This could be wrong "
        "when a cache is still filling (it stops growing later).",
        rss_bytes=marks,
        per_reset_bytes=per_reset,
    )
