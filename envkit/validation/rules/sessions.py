"""EK4xx sessions: concurrent sessions do not share episodes, and capacity is enforced.

TRL plays ``max_concurrent_envs`` sessions
at once; leaked sessions: huggingface/OpenEnv#1000.
"""

from __future__ import annotations

import time
from typing import Any

from envkit.findings import Severity, register
from envkit.validation import fuzz
from envkit.validation.engine import ActionPool, Episode, ServerPlayer
from envkit.validation.rules import determinism, protocol
from envkit.wire import (
    CAPACITY_REACHED,
    CONNECT_FAILED,
    SESSION_CLOSED,
    EnvErrorFrame,
    Refusal,
    SessionPool,
    WireTimeout,
    open_sessions,
)

CAPACITY_PROBE_LIMIT = 64  # sessions opened at most when looking for CAPACITY_REACHED

SESSIONS_INTERFERE = register(
    "EK419",
    "sessions-interfere",
    Severity.ERROR,
    rfc008="runtime.episode_isolation",
    summary="Two concurrent sessions change each other's episodes.",
    what="When the server accepts two sessions, envkit plays two seeded episodes "
    "interleaved step by step and compares them with the same episodes played one "
    "after the other (observations, rewards, `done`, then `state` at the end): first two "
    "seeds with the same actions, then one seed in both sessions, the second session with "
    "other actions (a GRPO group plays one seed in many sessions at once). A `state` that "
    "counts the other session's steps is reported as EK415.",
    why="TRL plays `max_concurrent_envs` episodes at once; shared state turns every batch "
    "into a mix of episodes with wrong rewards.",
    example="The task is stored in a module-level variable that each `reset` overwrites.",
    fix="Keep all episode state on the environment instance, or set "
    "`SUPPORTS_CONCURRENT_SESSIONS = False` and `max_concurrent_envs=1`.",
    classes=("BGW-114", "BGW-127", "TerminalWrench:mutable-input-tampering"),
)

CAPACITY_NOT_ENFORCED = register(
    "EK420",
    "capacity-not-enforced",
    Severity.WARNING,
    summary="The server accepts sessions without limit or refuses them without CAPACITY_REACHED.",
    what="envkit opens sessions until the server answers a CAPACITY_REACHED error frame "
    "(at most 64); the refusal must be that frame.",
    why="Leaked sessions (huggingface/OpenEnv#1000) then exhaust memory instead of being "
    "refused with a clear error a client can act on. A capacity above 64 cannot be told "
    "apart from no limit.",
    example="A custom server without a session limit.",
    fix="Pass `max_concurrent_envs=N` to `create_app` (N >= the trainer's batch size).",
)


def _fmt(value: Any) -> str:
    return fuzz.short_json(value, 80)


# the rounds of the interleaved check: which seed each session plays (an index into two
# seeds) and whether the second session plays other actions. Other actions (the other half
# of the pool) are played first in each turn, so that the first session meets their effect
# before its own actions could have had it; the second session is then not compared (no
# episode was played alone with its actions).
_ROUNDS = (
    ("seeds {a} and {b} interleaved", (0, 1), False),
    # a GRPO group: one seed in many sessions at once, each with its own actions
    ("seed {a} in both sessions, the second with other actions", (0, 0), True),
)


def interleaved(
    engine: ServerPlayer, actions: ActionPool, reference: determinism.Reference | None
) -> None:
    """EK419 (and EK415 for ``state.step_count``): two seeded episodes played step by step
    at the same time must equal the ``reference`` episodes played alone (from the
    determinism check; ``None``: not deterministic, skip): observations, rewards, ``done``,
    then ``state`` at the end. Two rounds, each on two fresh sessions: two seeds with the
    same actions, then one seed with other actions in the second session. Fields the
    determinism check found fresh on every reply of a single solo run (timings, request ids)
    are left out."""
    if reference is None:
        return
    seeds = (list(engine.settings.seeds) * 2)[:2]
    engine.progress("two sessions interleaved")
    for label, picks, other in _ROUNDS:
        pair = (seeds[picks[0]], seeds[picks[1]])
        played = _play_interleaved(engine, actions, pair, other)
        if played is None:
            return  # capacity 1: nothing to interleave
        engine.ran(SESSIONS_INTERFERE)
        eps, clean = played
        what = label.format(a=pair[0], b=pair[1])
        for ep in eps[:1] if other else eps:
            if _judge(engine, ep, reference, what, clean):
                return


def _play_interleaved(
    engine: ServerPlayer, actions: ActionPool, seeds: tuple[int, int], other: bool
) -> tuple[list[Episode], bool] | None:
    """Play ``seeds`` on two fresh sessions, one step each in turn, and record each
    session's ``state`` at the end. The first session plays ``actions.at(i)``; the second
    the same, or with ``other`` ``actions.at(i + len(actions) // 2)`` (at least ``i + 1``),
    stepped before the first session's in each turn. Returns (the two episodes, whether
    every step was answered or failed with EXECUTION_ERROR, as an episode played alone
    skips them); ``None`` when the server does not accept a second session."""
    try:
        a = engine.open(retry_s=1.0)
    except EnvErrorFrame:
        return None
    clean = True
    try:
        try:
            b = engine.open(retry_s=0.0)
        except EnvErrorFrame:
            return None
        try:
            pair = (a, b)
            eps = [
                Episode(seed, engine.reset(s, seed).observation, policy="interleaved")
                for s, seed in zip(pair, seeds)
            ]
            shift = max(1, len(actions) // 2) if other else 0
            live = [1, 0] if other else [0, 1]
            for i in range(engine.settings.max_steps):
                for k in list(live):
                    action = actions.at(i + shift * k)
                    try:
                        res = engine.step(pair[k], action)
                    except EnvErrorFrame as exc:
                        clean = clean and exc.code == "EXECUTION_ERROR"
                        continue
                    eps[k].steps.append(res)
                    eps[k].actions.append(action)
                    if res.done:
                        live.remove(k)
                if not live:
                    break
            for s, ep in zip(pair, eps):
                ep.states["end"] = engine.call("`state`", s.state)
        finally:
            b.close()
    finally:
        a.close()
    return eps, clean


def _judge(
    engine: ServerPlayer,
    ep: Episode,
    reference: determinism.Reference,
    what: str,
    clean: bool,
) -> bool:
    """Compare an interleaved episode with the same one played alone; report the first
    difference (EK419), else a different ``state.step_count`` at the end (EK415). True when
    one was reported."""
    alone = reference.episodes.get(ep.seed) if ep.seed is not None else None
    if alone is None:
        return False
    diffs = determinism.compare(alone, ep, reference.volatile, state=clean)
    if not diffs:
        if not clean:
            return False
        counted = _step_count(alone.states.get("end"))
        got = _step_count(ep.states.get("end"))
        if counted is None or got == counted:
            return False
        if not engine.has(protocol.STEP_COUNT_WRONG):
            engine.add(
                protocol.STEP_COUNT_WRONG,
                f"`state.step_count` must count the steps of its own session; with {what}, "
                f"it was {_fmt(got)} at the end of the episode of seed {ep.seed}, which "
                f"counts {counted} when played alone (actions {_fmt(ep.actions)}). Most "
                "likely one `State` object is shared by every session (a class attribute, "
                "or a module-level one).",
                seed=ep.seed,
                alone=counted,
                interleaved=got,
                actions=ep.actions,
            )
        return True
    d = diffs[0]
    where = "the reset observation" if d.where == "reset" else d.where
    engine.add(
        SESSIONS_INTERFERE,
        f"Two sessions played at the same time must each see the episode they would see "
        f"alone; with {what}, `{d.path}` ({where}) was {_fmt(d.second)} instead of "
        f"{_fmt(d.first)} (seed {ep.seed}, actions {_fmt(ep.actions)}). Most likely "
        "episode state lives in a module-level or class-level variable, or in an object "
        "cached per seed and changed by `step`.",
        field=d.path,
        where=d.where,
        alone=d.first,
        interleaved=d.second,
        seed=ep.seed,
        actions=ep.actions,
    )
    return True


def _step_count(state: Any) -> int | None:
    """``state.step_count`` when it is an integer, else ``None``."""
    n = state.get("step_count") if isinstance(state, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def capacity(engine: ServerPlayer) -> int:
    """EK420: open sessions until refused (at most 64 + 1), with the one probe validate and
    eval share (:func:`envkit.wire.open_sessions`).

    Returns:
        The number of sessions the server accepted at once.
    """
    engine.progress("capacity")
    time.sleep(0.05)
    try:
        pool = open_sessions(
            engine.url,
            CAPACITY_PROBE_LIMIT + 1,
            timeout_s=engine.settings.reply_s,
            before_each=engine.check_budget,
        )
    except WireTimeout as exc:  # a probe without an answer counts as a closed session
        pool = SessionPool([], Refusal(SESSION_CLOSED, {"message": exc.message}))
    pool.close()
    accepted, why = len(pool.sessions), pool.refusal
    # the session past the others' was neither refused nor accepted: its opening handshake
    # timed out, as behind a proxy that queues sessions until a replica is free
    queued = (
        why is not None
        and why.code == CONNECT_FAILED
        and accepted > 0
        and "timed out" in str(why.message).lower()
    )
    refused: str | None = None
    if why is not None:
        if why.code in (CONNECT_FAILED, SESSION_CLOSED):
            engine.check_alive()
        refused = (
            ""
            if why.code == CAPACITY_REACHED
            else f"the connection was refused ({why.message})"
            if why.code == CONNECT_FAILED
            else f"the session closed without an error frame ({why.message})"
            if why.code == SESSION_CLOSED
            else f"it answered {why.code} instead of CAPACITY_REACHED"
        )
    if accepted == 0 and why is not None and why.code == CONNECT_FAILED:
        # no WebSocket session opens at all (calendar_env answers /ws with 403): EK405 says
        # so already; there is no capacity to judge (one cause, one finding)
        engine.notes.append(f"capacity: not judged, no WebSocket session opens ({why.message})")
        return 0
    engine.ran(CAPACITY_NOT_ENFORCED)
    if refused is None:
        engine.add(
            CAPACITY_NOT_ENFORCED,
            f"The server must refuse sessions beyond its capacity with "
            f"CAPACITY_REACHED; it accepted {accepted} concurrent sessions (probe "
            "limit). Most likely sessions are not limited at all.",
            accepted=accepted,
        )
    elif queued:
        # what a proxy that queues sessions does (Ray Serve past its replicas' capacity): the
        # app's own setting is not what the user can change here
        engine.add(
            CAPACITY_NOT_ENFORCED,
            f"A session beyond capacity ({accepted} open) must be refused with a "
            "CAPACITY_REACHED error frame; it got no answer at all, as behind a proxy that "
            "queues sessions until a replica is free (Ray Serve does).",
            fix="Behind Ray Serve (`envkit deploy ray`) sessions past replicas x capacity wait "
            "in its proxy: size the replicas with `envkit capacity` and give clients a "
            "handshake timeout. Served by the app itself, pass `max_concurrent_envs=N` to "
            "`create_app`.",
            accepted=accepted,
        )
    elif refused:
        engine.add(
            CAPACITY_NOT_ENFORCED,
            f"A session beyond capacity ({accepted} open) must be refused with a "
            f"CAPACITY_REACHED error frame; {refused}.",
            accepted=accepted,
        )
    return accepted
