"""The runtime stage of ``envkit validate``: start (or reach) a server and play it over the wire.

Rules EK4xx (runtime and protocol) and EK5xx (reward integrity). This module is the order of play only. Each rule family's module in
:mod:`envkit.validation.rules` holds its rules and the code that finds them;
:mod:`envkit.validation.engine` holds the plumbing (budget, server, sessions, what the calls
recorded). What one check learns and a later one needs is passed explicitly: the /schema
schemas, the fuzzed actions, the reference episodes, the oracle's best reward.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from envkit.envdir.constants import DEFAULT_APP
from envkit.envdir.manifest import Manifest
from envkit.envdir.project import own_interpreter_note, resolve_python
from envkit.errors import UsageError
from envkit.findings import Finding
from envkit.policy import PolicyProcess
from envkit.validation import explore, fuzz, probing
from envkit.validation.engine import ActionPool, OutOfTime, ServerPlayer, Settings, Stop
from envkit.validation.options import Budget, RunOptions
from envkit.validation.rules import (
    determinism,
    endpoints,
    episodes,
    feedback_leaks,
    grader_hacks,
    integrity,
    liveness,
    load,
    mcp,
    protocol,
    reset_options,
    return_farming,
    reward,
    routes,
    sessions,
    training_signal,
    verifier,
)
from envkit.wire import normalise_url

#: The reward-design probes (EK513-EK523) in the order they play, each with the name a crash
#: of it is reported under. They play last (:func:`_play`): they read every episode played.
REWARD_PROBES: tuple[tuple[str, probing.Probe], ...] = (
    ("stalling probe", return_farming.stalling),
    ("format probe", verifier.format_over_correctness),
    ("brittle verifier probe", verifier.brittle_verifier),
    ("errors probe", verifier.errors_pay),
    ("observation size probe", load.observation_grows),
    ("memory probe", load.memory_grows),
    ("reset options probe", reset_options.reset_options_ignored),
    ("feedback leak probe", feedback_leaks.feedback_leaks),
    ("code hacks probe", grader_hacks.code_hacks),
    ("training signal probe", training_signal.training_signal),  # after the format probe
    ("oversized action probe", load.oversized_action),  # last: it may hang the server
)

DEFAULT_OPTIONS = RunOptions()  # a run_runtime call without options: the defaults


@dataclass
class RuntimeTarget:
    """What the runtime stage plays.

    Attributes:
        url: a running server (``--url``), else ``None``.
        root: environment directory: without ``url`` envkit starts its server from
            ``manifest.app`` and stops it afterwards; the oracle is imported from it.
        manifest: the parsed ``openenv.yaml``; ``None`` for a pure ``--url`` run (the
            defaults of :func:`envkit.envdir.project.env_spec` apply, no oracle).
        python: interpreter for the server and the oracle (``--python``; see
            :func:`envkit.envdir.project.resolve_python`).
        app: the ASGI app to start (``module:attr``) when ``manifest`` could not be read
            (openenv.yaml's raw ``app`` key); ``None``: the manifest's,
            else ``server.app:app``.
        while_up: called with the server's base URL after the runtime checks, while the
            server envkit started is still up (the training-path lane plays it instead of
            starting a second one); its time is not counted in ``timings["runtime"]``.
            Not called for ``url`` or when the server did not start.
    """

    url: str | None
    root: Path | None
    manifest: Manifest | None
    python: str | None
    app: str | None = None
    while_up: Callable[[str], object] | None = None


@dataclass
class RuntimeOutcome:
    """What the runtime stage found.

    Attributes:
        findings: EK4xx/EK5xx findings (stage ``runtime``; severities are the rules'
            defaults, the caller applies overrides).
        checks_run: codes of the runtime rules evaluated (passed or failed).
        timings: seconds, e.g. ``{"startup": 4.1, "runtime": 9.8}``.
        capacity: sessions the server accepted at once (``None``: not probed).
        launch: how envkit started the server (``None``: ``--url``, or it did not start),
            e.g. ``package form from the parent folder: uvicorn NAME.server.app:app in
            /x/envs``.
        notes: lines for the report: the way the server started when it was not the
            manifest form, probes skipped and why, envkit's own interpreter serving the
            environment (:func:`envkit.envdir.project.own_interpreter_note`).
        stopped: what ended the stage before its last check (``None``: it played to the
            end): the rules not evaluated were cut off by it.
        out_of_time: what the deadline left unplayed (``"the runtime stage"`` when the run's
            budget ran out, else the names of reward-design probes cut short); empty when
            time did not run out.
    """

    findings: list[Finding]
    checks_run: list[str]
    timings: dict[str, float]
    capacity: int | None = None
    launch: str | None = None
    notes: list[str] = field(default_factory=list)
    stopped: Stop | None = None
    out_of_time: list[str] = field(default_factory=list)


def run_runtime(
    target: RuntimeTarget, opts: RunOptions = DEFAULT_OPTIONS, budget: Budget | None = None
) -> RuntimeOutcome:
    """Run the runtime checks (EK4xx, EK5xx) against ``target``.

    Never raises for a misbehaving environment: a server that does not start, hangs,
    crashes or floods becomes a finding, and so does a crash inside one of envkit's checks
    (EK430; the other checks still run). With ``target.root`` (and no ``url``) the server is
    started on a free 127.0.0.1 port and always stopped, with its whole process group.

    Args:
        target: what to play.
        opts: the run's options; this stage reads ``episodes`` (each has at most
            ``max_steps`` steps, 50 when not declared), ``seed`` (the same seed gives the
            same actions), the three time limits (resolved once with the manifest into
            :class:`envkit.envdir.project.Timeouts`: ``timeout_s``, default 600, also caps
            the start-up and reply timeouts) and ``progress``.
        budget: the run's deadline (:class:`~envkit.validation.options.Budget`), shared with
            the stages before this one; ``None``: ``opts.timeout_s`` (or 600 s) from now.

    Returns:
        The :class:`RuntimeOutcome`.

    Raises:
        UsageError: ``target.python`` is not an executable, neither ``url`` nor ``root``
            is given, or a time limit is not > 0.
    """
    if not target.url and target.root is None:
        raise UsageError(
            "The runtime stage needs a URL or an environment directory.", hint="Pass PATH or --url."
        )
    python = resolve_python(target.root, target.python) if target.root is not None else None
    settings = Settings.resolve(target.manifest, opts)
    engine = ServerPlayer(settings, opts.progress, budget)
    engine.env_root = target.root
    if target.root is not None and not target.url:  # envkit serves it: with which Python?
        borrowed = own_interpreter_note(target.root, target.python)
        if borrowed:
            engine.notes.append(borrowed)
    fuzz.warm_up()  # ~1 s of imports, overlapped with the start-up and the endpoint checks
    t0 = time.perf_counter()
    capacity = None
    root = target.root
    lane_s = 0.0
    stopped: Stop | None = None
    # The oracle's import (seconds: it imports openenv too) overlaps the server's start-up.
    oracle_host = (
        reward.start_oracle(settings, root, python)
        if settings.oracle and root is not None and python is not None
        else None
    )
    try:
        if target.url:
            engine.url = normalise_url(target.url)
            capacity = _play(engine, root, python, oracle_host)
        elif root is not None and python is not None:
            app = target.app or (target.manifest.app if target.manifest else DEFAULT_APP)
            if liveness.start(engine, root, app, python):
                capacity = _play(engine, root, python, oracle_host)
                if target.while_up is not None and engine.url:
                    t_lane = time.perf_counter()
                    target.while_up(engine.url)
                    lane_s = time.perf_counter() - t_lane
    except Stop as stop:
        stopped = stop
        if isinstance(stop, OutOfTime):
            engine.out_of_time.insert(0, "the runtime stage")
        liveness.stopped(engine, stop)
    finally:
        if oracle_host is not None:  # not played (the server did not start), or already closed
            oracle_host.close()
        engine.close()
        protocol.reset_failures(engine)
        protocol.lost_sessions(engine)
        liveness.crashes(engine)
        liveness.frame_sizes(engine)
        engine.timings["runtime"] = round(time.perf_counter() - t0 - lane_s, 3)
    return RuntimeOutcome(
        engine.findings,
        engine.checks_run,
        engine.timings,
        capacity,
        launch=engine.launch,
        notes=engine.notes,
        stopped=stopped,
        out_of_time=engine.out_of_time,
    )


def _play(
    engine: ServerPlayer, root: Path | None, python: str | None, oracle_host: PolicyProcess | None
) -> int | None:
    """The order of play, every check guarded (:meth:`ServerPlayer.guard`); returns the server's
    capacity (``None``: not probed). ``oracle_host``: the oracle's process, started early."""
    api = engine.guard("endpoints", endpoints.check, engine, quiet=True)
    if api is None:  # no answer on /health (reported), or the check crashed: nothing to play
        return None
    served = engine.guard("routes", routes.check, engine, quiet=True) or routes.Served(None)
    engine.guard("mcp", mcp.check, engine, quiet=True)
    watch = protocol.ObservationWatch(api.observation, api.reset_observation)
    engine.watch_observations(watch)
    actions = engine.guard(
        "action generation", episodes.action_pool, engine, api.action, quiet=True
    ) or ActionPool([])

    if engine.guard("round trip", protocol.round_trip, engine, actions, served.production) is False:
        return None  # `reset` fails: reported (EK418 or EK405)
    if actions and api.action is not None:
        engine.guard("step before reset", protocol.step_before_reset, engine, actions)
        engine.guard("invalid actions", protocol.invalid_actions, engine, api.action, actions)
    engine.guard("malformed frames", protocol.malformed_frames, engine)
    space = explore.ActionSpace.from_pool(api.action, actions) if api.action is not None else None
    after_done = integrity.AfterDone(engine, actions, space)
    oracle_best = None
    if actions and api.action is not None:
        engine.on_episode_end = after_done  # every finished episode is stepped again
        engine.guard("fuzzed episodes", episodes.fuzz_episodes, engine, api.action, actions)
        reference = engine.guard("determinism", determinism.check, engine, actions)
        engine.guard("probe plan", determinism.replay_plan, engine, root, quiet=True)
        oracle_best = engine.guard("oracle", reward.oracle, engine, root, python, oracle_host)
        engine.guard("oracle replay", determinism.oracle_replay, engine, quiet=True)
        means = engine.guard(
            "degenerate policies", reward.degenerate, engine, api.action, actions, oracle_best
        )
        engine.guard("exploring episodes", episodes.explore_episodes, engine, space)
        engine.guard("solution leakage", integrity.leak, engine, api.action, actions, quiet=True)
        engine.on_episode_end = None
        engine.guard(
            "fresh instance", integrity.fresh_http, engine, api.action, actions, means, quiet=True
        )
        engine.guard("concurrent sessions", sessions.interleaved, engine, actions, reference)
    capacity = engine.guard("capacity", sessions.capacity, engine)

    engine.guard("after done verdict", after_done.verdict, quiet=True)
    engine.guard(
        "reward verdicts",
        lambda: reward.verdicts(
            engine,
            oracle_played=engine.settings.oracle is not None
            and root is not None
            and python is not None,
        ),
        quiet=True,
    )
    engine.guard("action verdict", integrity.ignores_action, engine, quiet=True)
    engine.guard("observation verdict", protocol.observations, engine, watch, quiet=True)
    engine.guard("latency verdict", liveness.latency, engine, quiet=True)
    if engine.episodes:  # last: the reward-design probes read every episode played
        engine.guard("reward probes", probing.run, engine, REWARD_PROBES, quiet=True)
    return capacity
