"""EK4xx episodes: fuzzed episodes end, and no action the schema allows makes ``step`` raise.

Actions are generated from the /schema action schema (hypothesis-jsonschema, seeded: the same
``--seed`` gives the same actions); an action that raised is shrunk field by field before it is
reported.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from envkit.findings import Severity, register
from envkit.validation import explore, fuzz
from envkit.validation.engine import ACTION_POOL, ActionPool, Episode, ServerPlayer
from envkit.validation.rules import protocol
from envkit.wire import EnvErrorFrame

ACTION_RAISES = register(
    "EK410",
    "action-raises",
    Severity.ERROR,
    summary="A valid action (generated from the action schema) raises inside the environment.",
    what="envkit plays actions generated from the /schema action JSON Schema; an "
    "EXECUTION_ERROR frame means `step` raised on an action the schema allows. envkit "
    "reports the action, shrunk field by field to a minimal one that still raises.",
    why="The schema is a promise to agents: every action it allows must give an observation. "
    "A policy exploring will find the crash within hours of training.",
    example='`step` does `int(action.message)` on a free-text field: `ValueError` for "a".',
    fix="Handle every action the schema allows (return a low reward and feedback), or "
    "tighten the schema (`max_length`, `pattern`, `ge`/`le`, `Literal`).",
    classes=("rl-envdoctor:grader-crash",),
)

EPISODE_NEVER_ENDS = register(
    "EK414",
    "episode-never-ends",
    Severity.ERROR,
    summary="Episodes do not end (done=true) within `envkit.max_steps`.",
    what="envkit plays fuzzed and degenerate policies and counts the steps until `done` is "
    "true; none may exceed `envkit.max_steps` (50 when it is not declared).",
    why="Trainers batch rollouts by episode; an episode that never ends blocks the batch "
    "until an outer timeout and wastes the GPU time around it.",
    example="The `openenv init` template returns `done=False` on every step.",
    fix="End the episode (done=True) on success and after a maximum number of steps; "
    "declare it as `envkit.max_steps`.",
)

STEP_AFTER_DONE = register(
    "EK417",
    "step-after-done-accepted",
    Severity.WARNING,
    summary="A step after `done=true` continues the episode as if nothing happened.",
    what="After every episode end envkit reaches (fuzzed, oracle, degenerate and exploring "
    "policies; the exploring one plays the legal actions the observation lists), it "
    "steps the finished episode again (the last action, the oracle's winning action, a "
    "legal action the terminal observation still lists, a fuzzed action); the answer "
    "should keep `done=true` (or be an error frame), not `done=false`. A reward paid "
    "while `done` stays true is EK508.",
    why="Clients that miss `done` keep collecting reward from a finished episode, which "
    "corrupts returns.",
    example="`step` never checks whether the episode is over.",
    fix="After the episode ends, answer steps with `done=True` and reward 0 (or raise a "
    "clear error) until `reset`.",
)


def action_pool(engine: ServerPlayer, schema: dict[str, Any] | None) -> ActionPool:
    """The fuzzed actions every later check plays (empty without an action schema); at
    least one, the minimal action, when the generator cannot satisfy the schema."""
    if schema is None:
        return ActionPool([])
    settings = engine.settings
    try:
        count = min(settings.episodes * settings.max_steps, ACTION_POOL)
        actions = fuzz.generate_actions(schema, max(count, 4), settings.seed)
    except ValueError as exc:
        engine.progress(f"cannot fuzz: {exc}")
        actions = []
    if not actions:
        minimal = fuzz.extreme_value(
            fuzz.action_schema(schema), fuzz.action_schema(schema), "empty"
        )
        actions = [minimal] if isinstance(minimal, dict) else []
    return ActionPool(actions)


def fuzz_episodes(engine: ServerPlayer, schema: dict[str, Any], actions: ActionPool) -> None:
    """EK410, EK414 (and EK415 after the first episode): ``settings.episodes`` episodes of
    fuzzed actions on one session. Each finished episode goes to
    :meth:`ServerPlayer.ended` (the after-``done`` probes, EK417/EK508, hook in there)."""
    settings = engine.settings
    raised: list[tuple[int | None, dict[str, Any], str]] = []
    overlong: list[int | None] = []
    idx = 0
    s = engine.open()
    try:
        for n in range(settings.episodes):
            seed = settings.seeds[n % len(settings.seeds)]
            eid = f"envkit-{uuid.uuid4().hex[:12]}"
            engine.progress(f"fuzzed episode {n + 1}/{settings.episodes} (seed {seed})")
            try:
                first = engine.reset(s, seed, episode_id=eid)
            except EnvErrorFrame as exc:
                protocol.reset_failed(engine, exc, seed)
                return
            ep = Episode(seed, first.observation, policy="fuzz")
            for _ in range(settings.max_steps):
                action = actions.at(idx)
                idx += 1
                try:
                    res = engine.step(s, action)
                except EnvErrorFrame as exc:
                    if exc.code == "EXECUTION_ERROR":
                        raised.append((seed, action, str(exc.data.get("message", ""))))
                    continue
                if ep.record(res, action):
                    break
            taken = len(ep.steps)
            if n == 0 and not raised:
                state = engine.call("`state`", s.state)
                protocol.check_state(engine, state, None, taken, f"after {taken} steps")
            if not ep.done and taken >= settings.max_steps:
                overlong.append(seed)
            engine.ended(s, ep)
    finally:
        s.close()
    engine.ran(ACTION_RAISES, EPISODE_NEVER_ENDS)
    if overlong:
        bound = (
            f"`envkit.max_steps` ({settings.max_steps})"
            if settings.max_steps_declared
            else f"{settings.max_steps} steps (`envkit.max_steps` is not declared)"
        )
        engine.add(
            EPISODE_NEVER_ENDS,
            f"Every episode must end (`done=true`) within {bound}; "
            f"{len(overlong)} of {settings.episodes} fuzzed episodes did not (seeds "
            f"{sorted({s for s in overlong if s is not None})}). Most likely "
            "`step` never sets `done=True`.",
            seeds=overlong,
        )
    if raised:
        _report_raise(engine, schema, raised)


EXPLORE_STEPS = 500  # steps per exploring episode when `envkit.max_steps` is not declared
EXPLORE_BUDGET_S = 30.0  # seconds the exploring episodes may take at most, all seeds together
EXPLORE_EPISODES = 3  # exploring episodes at least (the seeds are cycled)


def explore_episodes(engine: ServerPlayer, space: explore.ActionSpace) -> int:
    """Play the exploring policy (:class:`envkit.validation.explore.Explorer`) once per seed
    (at least :data:`EXPLORE_EPISODES` episodes, the seeds cycled), each on a session of its
    own, so that the after-``done`` probes (EK417, EK508) see the real episode ends fuzzing
    does not reach. It judges no rule itself: an episode it plays longer
    than ``max_steps`` is not EK414 (the fuzzed episodes judge that).

    Each episode has at most ``envkit.max_steps`` steps when declared, else
    :data:`EXPLORE_STEPS`; all of them together at most :data:`EXPLORE_BUDGET_S` seconds
    and a quarter of what is left of the stage's budget.

    Returns:
        How many exploring episodes ended with ``done=true``.
    """
    settings = engine.settings
    cap = settings.max_steps if settings.max_steps_declared else EXPLORE_STEPS
    budget_s = min(EXPLORE_BUDGET_S, engine.remaining_s() / 4)
    until = time.monotonic() + budget_s
    ended = 0
    seeds = list(settings.seeds) * EXPLORE_EPISODES
    for n, seed in enumerate(seeds[: max(len(settings.seeds), EXPLORE_EPISODES)]):
        if time.monotonic() > until:
            engine.notes.append(
                f"explore: the {budget_s:.0f} s for exploring episodes ran "
                f"out after {n}; later episode ends were not probed."
            )
            break
        engine.progress(f"exploring episode (seed {seed})")
        policy = explore.Explorer(space, settings.seed * 1000 + n)
        try:
            ep = engine.play_alone(seed, policy, name="explore", max_steps=cap, until=until)
        except EnvErrorFrame as exc:
            if exc.code == "CAPACITY_REACHED":
                raise
            engine.notes.append(f"explore: stopped, `reset(seed={seed})` failed: {exc.message}")
            break
        ended += ep.done
    return ended


def _report_raise(
    engine: ServerPlayer,
    schema: dict[str, Any],
    raised: list[tuple[int | None, dict[str, Any], str]],
) -> None:
    """EK410 with the first action that raised, shrunk to a minimal one that still does."""
    seed, action, message = raised[0]
    required = set(fuzz.action_schema(schema).get("required") or [])
    engine.progress("shrinking the action that raised")
    minimal = action
    s = engine.open()
    try:

        def error_of(candidate: dict[str, Any]) -> str | None:
            try:
                engine.reset(s, seed)
                engine.call("`step`", s.step, candidate)
            except EnvErrorFrame as exc:
                if exc.code == "EXECUTION_ERROR":
                    return str(exc.data.get("message", ""))
            return None

        if error_of(action) is not None:
            minimal = fuzz.shrink(action, lambda c: error_of(c) is not None, required=required)
            message = error_of(minimal) or message
    finally:
        s.close()
    engine.add(
        ACTION_RAISES,
        raises_message(minimal, seed, message, len(raised)),
        action=minimal,
        original_action=action,
        error=message,
        seed=seed,
    )


def visible_json(value: Any, limit: int = 160) -> str:
    """``value`` as compact JSON in which every character a terminal would not show is
    escaped: JSON escapes only C0 controls, so ``\\x7f``, C1 controls (``\\x84``), format
    characters (zero-width space) and line separators stay raw and vanish from the printed
    message, which then names another action than the one sent. Escaped the JSON way
    (``\\u0084``; surrogate pairs above U+FFFF), so the text still parses back to the
    action. Cut at ``limit`` characters (``…``), never inside an escape."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)[:limit]
    out: list[str] = []
    size = 0
    for ch in text:
        piece = ch if ch.isprintable() else json.dumps(ch)[1:-1]
        if size + len(piece) > limit - 1:
            out.append("…")
            break
        out.append(piece)
        size += len(piece)
    return "".join(out)


def raises_message(action: dict[str, Any], seed: int | None, error: str, count: int) -> str:
    """EK410's message: the minimal ``action`` that raised after ``reset(seed=seed)``
    (:func:`visible_json`: every control character shown escaped), the ``error`` (its first
    200 characters) and how many fuzzed steps raised (``count``)."""
    return (
        f"Every action the schema allows must give an observation; "
        f"`step({visible_json(action)})` after `reset(seed={seed})` raised "
        f"{error[:200]!r} ({count} fuzzed step(s) raised)."
    )
