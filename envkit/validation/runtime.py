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

from envkit.envdir import EnvDir
from envkit.envdir.manifest import EnvSpec
from envkit.errors import UsageError
from envkit.findings import Finding
from envkit.policy import PolicyProcess
from envkit.validation import explore, fuzz, probing
from envkit.validation import offered as offered_
from envkit.validation.engine import ActionPool, OutOfTime, ServerPlayer, Settings, Stop
from envkit.validation.options import Budget, RunOptions
from envkit.validation.rules import (
    blind_play,
    determinism,
    endpoints,
    episodes,
    exploit_search,
    feedback_leaks,
    grader_hacks,
    integrity,
    liveness,
    load,
    mcp,
    processes,
    protocol,
    reset_options,
    return_farming,
    reward,
    routes,
    sessions,
    training_signal,
    verifier,
    weak_tests,
)
from envkit.wire import normalise_url

#: The codes of the reward-design probes EK513-EK523: each reads the episodes the others
#: played (an error step found in a stalling episode is EK515's), so they play together.
DESIGN_PROBES = tuple(f"EK{n}" for n in range(513, 524))

#: The reward-design probes (EK513-EK525) in the order they play: the name a crash of it is
#: reported under, the probe, and the codes it plays for (``--select``/``--ignore`` leave a
#: probe none of whose codes is wanted unplayed). They play last (:func:`_play`): they read
#: every episode played.
REWARD_PROBES: tuple[tuple[str, probing.Probe, tuple[str, ...]], ...] = (
    ("stalling probe", return_farming.stalling, DESIGN_PROBES),
    ("format probe", verifier.format_over_correctness, DESIGN_PROBES),
    ("brittle verifier probe", verifier.brittle_verifier, DESIGN_PROBES),
    ("errors probe", verifier.errors_pay, DESIGN_PROBES),
    ("observation size probe", load.observation_grows, DESIGN_PROBES),
    ("memory probe", load.memory_grows, DESIGN_PROBES),
    ("reset options probe", reset_options.reset_options_ignored, DESIGN_PROBES),
    ("feedback leak probe", feedback_leaks.feedback_leaks, DESIGN_PROBES),
    # the exploit search starts from their episodes
    ("question-blind policies", blind_play.blind_policies, ("EK524", "EK525")),
    # after them too: it replays the episode whose rewards say most on a second process
    ("second process probe", processes.surroundings, ("EK411", "EK412")),
    ("code hacks probe", grader_hacks.code_hacks, DESIGN_PROBES),
    # a wrong program that some seeds pay shows a verdict reused across seeds (EK412)
    ("weak tests probe", weak_tests.weak_tests, ("EK526", "EK412")),
    ("training signal probe", training_signal.training_signal, DESIGN_PROBES),
    # last but one: it spends its own budget (--search-budget), not the probes'
    ("exploit search", exploit_search.exploit_search, ("EK525",)),
    ("oversized action probe", load.oversized_action, ("EK517", *DESIGN_PROBES)),  # may hang
)

DEFAULT_OPTIONS = RunOptions()  # a run_runtime call without options: the defaults


@dataclass
class RuntimeTarget:
    """What the runtime stage plays.

    Attributes:
        url: a running server (``--url``), else ``None``: envkit starts the server from
            ``envdir`` and stops it afterwards.
        envdir: the environment directory, read once (:class:`envkit.envdir.EnvDir`); every
            fact of it (the manifest's reward range, max_steps, oracle and time limits, the
            interpreter, the app) is asked of it. ``None`` for a pure ``--url`` run (the
            defaults of :class:`envkit.envdir.manifest.EnvSpec` apply, no oracle).
        python: ``--python``, the interpreter for the server and the oracle (``None``: the
            one :meth:`envkit.envdir.EnvDir.python` picks).
        app: the ASGI app to start (``module:attr``) when the manifest could not be read
            (openenv.yaml's raw ``app`` key); ``None``: :attr:`envkit.envdir.EnvDir.app`.
        oracle_with_url: with ``url``, still run the environment's own code from ``envdir``
            (the oracle, the probe plan); without it only ``envdir``'s facts are used.
        while_up: called with the server's base URL after the runtime checks, while the
            server envkit started is still up (the training-path lane plays it instead of
            starting a second one); its time is not counted in ``timings["runtime"]``.
            Not called for ``url`` or when the server did not start.
        wanted: the rule codes the run selected (``RuleSelection.enabled``): checks none
            of whose codes is wanted are not played; ``None``: all.
    """

    url: str | None
    envdir: EnvDir | None
    python: str | None = None
    app: str | None = None
    oracle_with_url: bool = False
    while_up: Callable[[str], object] | None = None
    wanted: Callable[[str], bool] | None = None

    @property
    def root(self) -> Path | None:
        """The directory the environment's code runs from (the server, the oracle, the probe
        plan); ``None`` when only its facts are used (``url`` without ``oracle_with_url``)."""
        if self.envdir is None or (self.url and not self.oracle_with_url):
            return None
        return self.envdir.root

    @property
    def spec(self) -> EnvSpec | None:
        """The manifest's facts (:attr:`envkit.envdir.EnvDir.spec`); ``None`` without a
        readable manifest (the runtime stage's defaults apply)."""
        envdir = self.envdir
        return envdir.spec if envdir is not None and envdir.manifest is not None else None


@dataclass
class RuntimeOutcome:
    """What the runtime stage found.

    Attributes:
        findings: EK4xx/EK5xx findings (stage ``runtime``; severities are the rules'
            defaults, the caller applies overrides).
        checks_run: codes of the runtime rules evaluated (passed or failed).
        timings: seconds, e.g. ``{"startup": 4.1, "runtime": 9.8}``.
        capacity: sessions the server accepted at once (``None``: not probed, or EK420
            not wanted).
        launch: how envkit started the server (``None``: ``--url``, or it did not start),
            e.g. ``package form from the parent folder: uvicorn NAME.server.app:app in
            /x/envs``.
        notes: lines for the report: the way the server started when it was not the
            manifest form, probes skipped and why, envkit's own interpreter serving the
            environment (:meth:`envkit.envdir.EnvDir.interpreter_note`).
        skipped: rule code -> why the stage could not evaluate it (e.g. no action it sent
            was accepted), for rules not in ``checks_run``.
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
    skipped: dict[str, str] = field(default_factory=dict)
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
        UsageError: ``target.python`` is not an executable, neither ``url`` nor ``envdir``
            is given, or a time limit is not > 0.
    """
    if not target.url and target.envdir is None:
        raise UsageError(
            "The runtime stage needs a URL or an environment directory.", hint="Pass PATH or --url."
        )
    # the directory the environment's own code runs from; None: only its facts are used
    runs = target.envdir if target.root is not None else None
    python = runs.python(target.python) if runs is not None else None
    settings = Settings.resolve(target.spec, opts)
    engine = ServerPlayer(settings, opts.progress, budget)
    engine.env_root, engine.python = target.root, python
    engine.wanted = target.wanted
    if runs is not None and not target.url:  # envkit serves it: with which Python?
        borrowed = runs.interpreter_note(target.python)
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
            up = True
        else:  # envkit serves it
            up = runs is not None and liveness.start(engine, target.app or runs.app)
        if up:
            capacity = _play(engine, oracle_host)
            if target.while_up is not None and not target.url and engine.url:
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
        skipped=engine.skipped,
        stopped=stopped,
        out_of_time=engine.out_of_time,
    )


def _play(engine: ServerPlayer, oracle_host: PolicyProcess | None) -> int | None:
    """The order of play, every check guarded (:meth:`ServerPlayer.guard`); returns the server's
    capacity (``None``: not probed). ``oracle_host``: the oracle's process, started early."""
    api = engine.guard("endpoints", endpoints.check, engine, quiet=True)
    if api is None:  # no answer on /health (reported), or the check crashed: nothing to play
        return None
    served = engine.guard("routes", routes.check, engine, quiet=True) or routes.Served(None)
    listed = engine.guard("mcp", mcp.check, engine, quiet=True)
    watch = protocol.ObservationWatch(api.observation, api.reset_observation)
    engine.watch_observations(watch)
    # what policies draw from: tool calls carry arguments of each tool's input schema
    offered = (
        engine.guard("action shapes", offered_.discover, engine, api.action, listed, quiet=True)
        if api.action is not None
        else None
    )
    play = offered.play if offered is not None else api.action
    actions = engine.guard(
        "action generation", episodes.action_pool, engine, play, quiet=True
    ) or ActionPool([])

    if engine.guard("round trip", protocol.round_trip, engine, actions, served.production) is False:
        return None  # `reset` fails: reported (EK418 or EK405)
    # A check that only feeds its own codes names them (`codes`): left unplayed when
    # --select/--ignore want none of them; the others feed later checks and always play.
    if actions and api.action is not None:
        engine.guard(
            "step before reset",
            protocol.step_before_reset,
            engine,
            actions,
            codes=(protocol.STEP_BEFORE_RESET.code,),
        )
        engine.guard(
            "invalid actions",
            protocol.invalid_actions,
            engine,
            api.action,
            actions,
            codes=(protocol.INVALID_ACTION_ACCEPTED.code,),
        )
    engine.guard(
        "malformed frames",
        protocol.malformed_frames,
        engine,
        codes=(protocol.MALFORMED_FRAME_CRASH.code,),
    )
    space = explore.ActionSpace.from_pool(play, actions) if play is not None else None
    after_done = integrity.AfterDone(engine, actions, space)
    oracle_best = None
    if actions and api.action is not None:
        engine.on_episode_end = after_done  # every finished episode is stepped again
        engine.guard("fuzzed episodes", episodes.fuzz_episodes, engine, play, actions)
        reference = engine.guard("determinism", determinism.check, engine, actions)
        engine.guard("probe plan", determinism.replay_plan, engine, quiet=True)
        oracle_best = engine.guard("oracle", reward.oracle, engine, oracle_host)
        engine.guard("oracle replay", determinism.oracle_replay, engine, quiet=True)
        means = engine.guard(
            "degenerate policies", reward.degenerate, engine, play, actions, oracle_best
        )
        engine.guard("exploring episodes", episodes.explore_episodes, engine, space)
        engine.guard("solution leakage", integrity.leak, engine, play, actions, quiet=True)
        engine.on_episode_end = None
        engine.guard(
            "fresh instance",
            integrity.fresh_http,
            engine,
            play,
            actions,
            means,
            quiet=True,
            codes=(integrity.FRESH_INSTANCE_PAYS.code,),
        )
        engine.guard(
            "concurrent sessions",
            sessions.interleaved,
            engine,
            actions,
            reference,
            codes=(sessions.SESSIONS_INTERFERE.code, protocol.STEP_COUNT_WRONG.code),
        )
    capacity = engine.guard(
        "capacity", sessions.capacity, engine, codes=(sessions.CAPACITY_NOT_ENFORCED.code,)
    )

    engine.guard("after done verdict", after_done.verdict, quiet=True)
    engine.guard(
        "reward verdicts",
        lambda: reward.verdicts(
            engine,
            oracle_played=engine.settings.oracle is not None
            and engine.env_root is not None
            and engine.python is not None,
        ),
        quiet=True,
    )
    engine.guard("action verdict", integrity.ignores_action, engine, quiet=True)
    engine.guard("observation verdict", protocol.observations, engine, watch, quiet=True)
    engine.guard("latency verdict", liveness.latency, engine, quiet=True)
    if engine.episodes:  # last: the reward-design probes read every episode played
        engine.guard("reward probes", probing.run, engine, REWARD_PROBES, offered, quiet=True)
    return capacity
