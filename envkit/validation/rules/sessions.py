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
from envkit.validation.rules import determinism
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
    "after the other.",
    why="TRL plays `max_concurrent_envs` episodes at once; shared state turns every batch "
    "into a mix of episodes with wrong rewards.",
    example="The task is stored in a module-level variable that each `reset` overwrites.",
    fix="Keep all episode state on the environment instance, or set "
    "`SUPPORTS_CONCURRENT_SESSIONS = False` and `max_concurrent_envs=1`.",
    limits="Sessions that interfere only when they play the same seed (a per-seed cache of mutable"
    " episodes) are not seen: the interleaved check plays two different seeds.",
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


def interleaved(
    engine: ServerPlayer, actions: ActionPool, reference: determinism.Reference | None
) -> None:
    """EK419: two seeded episodes played step by step at the same time must equal the
    ``reference`` episodes (from the determinism check; ``None``: not deterministic, skip).
    Fields the determinism check found fresh on every reply of a single solo run (timings,
    request ids) are left out."""
    if reference is None:
        return
    seeds = (list(engine.settings.seeds) * 2)[:2]
    try:
        a = engine.open(retry_s=1.0)
    except EnvErrorFrame:
        return
    try:
        try:
            b = engine.open(retry_s=0.0)
        except EnvErrorFrame:
            return  # capacity 1: nothing to interleave
        try:
            engine.progress("two sessions interleaved")
            eps = [
                Episode(seed, engine.reset(s, seed).observation, policy="interleaved")
                for s, seed in ((a, seeds[0]), (b, seeds[1]))
            ]
            live = [0, 1]
            for i in range(engine.settings.max_steps):
                for k in list(live):
                    try:
                        res = engine.step((a, b)[k], actions.at(i))
                    except EnvErrorFrame:
                        continue
                    eps[k].steps.append(res)
                    eps[k].actions.append(actions.at(i))
                    if res.done:
                        live.remove(k)
                if not live:
                    break
        finally:
            b.close()
    finally:
        a.close()
    engine.ran(SESSIONS_INTERFERE)
    for ep in eps:
        alone = reference.episodes.get(ep.seed) if ep.seed is not None else None
        diffs = determinism.compare(alone, ep, reference.volatile, state=False) if alone else []
        if diffs:
            d = diffs[0]
            where = "the reset observation" if d.where == "reset" else d.where
            engine.add(
                SESSIONS_INTERFERE,
                f"Two sessions played at the same time must each see the episode they "
                f"would see alone; with seeds {seeds[0]} and {seeds[1]} interleaved, "
                f"`{d.path}` ({where}) was {_fmt(d.second)} instead of "
                f"{_fmt(d.first)} (seed {ep.seed}, actions {_fmt(ep.actions)}). Most "
                "likely episode state lives in a module-level or class-level variable.",
                field=d.path,
                where=d.where,
                alone=d.first,
                interleaved=d.second,
                seed=ep.seed,
                actions=ep.actions,
            )
            return


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
