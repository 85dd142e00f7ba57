"""A second server process of the launch form envkit started the environment with: what an
episode must not depend on (the process, its surroundings) is shown by replaying it there.
Used by the determinism checks (EK413: randomness drawn once per process) and the
cross-process probe (EK411/EK412: another hash seed, time zone, locale)."""

from __future__ import annotations

from collections.abc import Mapping

from envkit.errors import ServerStartError, WireError
from envkit.server import _spawn
from envkit.validation.engine import Episode, ServerPlayer
from envkit.wire import EnvErrorFrame, EnvSession


def replay_on_second_process(
    engine: ServerPlayer,
    first: Episode,
    *,
    env: Mapping[str, str] | None = None,
    with_state: bool = False,
    skip_errors: bool = False,
) -> Episode | None:
    """``first``'s ``reset(seed)`` and actions replayed on a second process of the launch
    form envkit started the server with, stopped afterwards.

    Args:
        env: environment variables of the second process beyond the first's (``None``: the
            same surroundings).
        with_state: record ``state`` after ``reset`` and at the end.
        skip_errors: a step answered with an error frame is left out, as a replay on the
            first process leaves it out (else the replay is given up).

    Returns:
        The replayed episode (``policy="replay"``); ``None`` when the second process does not
        start or answer (a progress line says why: the first was checked by the other rules).
    """
    server, cand = engine.server, getattr(engine.server, "candidate", None)
    if server is None or cand is None:
        return None
    twin = None
    try:
        spawn = {**server._spawn_args, "port": 0}
        if env is not None:
            spawn["env"] = env
        twin = _spawn(cand, **spawn)
        twin.wait_healthy(timeout_s=max(0.1, min(engine.settings.startup_s, engine.remaining_s())))
        s = EnvSession(twin.url, timeout_s=engine.settings.reply_s)
        try:
            ep = Episode(first.seed, s.reset(seed=first.seed).observation, policy="replay")
            if with_state:
                ep.states["reset"] = s.state()
            for action in first.actions:
                try:
                    res = s.step(action)
                except EnvErrorFrame as exc:
                    if skip_errors and exc.code != "CAPACITY_REACHED":
                        continue
                    raise
                if ep.record(res, action):
                    break
            if with_state:
                ep.states["end"] = s.state()
        finally:
            s.close()
    except (ServerStartError, WireError, EnvErrorFrame) as exc:
        engine.progress(f"second server process: skipped ({exc})")
        return None
    finally:
        if twin is not None:
            twin.stop(grace_s=1.0)
    return ep
