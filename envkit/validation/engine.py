"""The plumbing of the runtime stage: budget, server, sessions, calls and what they recorded.

The rule modules (``envkit.validation.rules.*``) decide findings; this module only plays the
environment for them, over the OpenEnv contract (HTTP ``/health``, ``/schema``, ``/metadata``,
``/step`` and WebSocket ``/ws`` sessions). Environment code never runs inside envkit.

Four outcomes of a call are not the calling check's business and are raised as :class:`Stop`
(the stage ends; :mod:`envkit.validation.rules.liveness` turns it into a finding): no answer
within the reply timeout (:class:`NoAnswer`), the server process gone (:class:`ServerDied`),
the stage's budget spent (:class:`OutOfTime`), an observation over the size limit
(:class:`ObservationTooLarge`). :meth:`ServerPlayer.guard` runs one check so that a
session lost or a crash inside envkit's own check is recorded and the next check runs.
"""

from __future__ import annotations

import math
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeGuard, TypeVar

import httpx

from envkit.blind import shapes
from envkit.envdir.constants import DEFAULT_BLIND_FLOOR, VALIDATE_MAX_STEPS
from envkit.envdir.manifest import EnvSpec
from envkit.envdir.project import Timeouts, no_answer
from envkit.errors import WireError
from envkit.findings import Finding, Rule
from envkit.server import ServerProcess, start_server
from envkit.validation.options import (
    DEFAULT_BUDGET_S,
    DEFAULT_SEARCH_BUDGET_S,
    Budget,
    RunOptions,
)
from envkit.wire import (
    MAX_OBSERVATION_BYTES,
    EnvErrorFrame,
    EnvSession,
    StepResult,
    WireTimeout,
    probe_frame,
    tls,
)

DEFAULT_MAX_STEPS = VALIDATE_MAX_STEPS  # episode bound when max_steps is not declared
ACTION_POOL = 100  # fuzzed actions generated at most (reused cyclically beyond)
STOP_GRACE_S = 1.0  # SIGTERM grace before SIGKILL (uvicorn waits for in-flight steps)
EPS = 1e-9  # tolerance of reward comparisons

T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True)
class Settings:
    """What the runtime stage was asked to do, resolved once.

    Attributes:
        episodes: fuzzed episodes (>= 1).
        seed: seed of the action generator.
        timeouts: the run's time limits, resolved once from the options and the manifest
            (:meth:`envkit.validation.options.RunOptions.timeouts`); read through
            :attr:`budget_s`, :attr:`reply_s` and :attr:`startup_s`.
        max_steps: episode bound (``max_steps`` or 50).
        max_steps_declared: whether the manifest declares ``max_steps``.
        lo, hi: the declared reward range.
        seeds: up to three distinct reset seeds (``seeds``, else ``[0]``).
        floor_margin: how far below the oracle a degenerate policy must stay.
        oracle_tolerance: how far below ``hi`` the oracle may stay (RFC 008).
        step_timeout_s: p95 step latency budget, seconds.
        oracle: ``module:callable`` or ``None``.
        has_manifest: the manifest was given (``False`` for a pure ``--url`` run).
        probe_path: the declared runtime probe plan (``validation.execution.probe_path``),
            or ``None``.
        blind_floor: ``(warning, error)`` shares of the oracle's return a question-blind
            policy may not exceed (``envkit.blind_floor``).
        search_budget_s: seconds of the reward-guided exploit search (0: off).
    """

    episodes: int
    seed: int
    timeouts: Timeouts
    max_steps: int
    max_steps_declared: bool
    lo: float
    hi: float
    seeds: tuple[int, ...]
    floor_margin: float
    step_timeout_s: float
    oracle: str | None
    has_manifest: bool
    probe_path: str | None = None
    oracle_tolerance: float = 0.0
    blind_floor: tuple[float, float] = DEFAULT_BLIND_FLOOR
    search_budget_s: float = 0.0

    @classmethod
    def resolve(cls, spec: EnvSpec | None, opts: RunOptions) -> Settings:
        """Resolve the settings once from the run's options and the environment's facts
        (:attr:`envkit.envdir.EnvDir.spec`; ``None``, a pure ``--url`` run or a manifest that
        cannot be read, gives the defaults).

        Raises:
            UsageError: a given time limit is not > 0.
        """
        has_manifest = spec is not None
        spec = spec if spec is not None else EnvSpec()
        seeds = tuple(dict.fromkeys(spec.seeds))[:3] or (0,)
        lo, hi = (float(x) for x in spec.reward_range)
        return cls(
            episodes=max(1, opts.episodes),
            seed=opts.seed,
            timeouts=opts.timeouts(spec),
            max_steps=spec.max_steps or DEFAULT_MAX_STEPS,
            max_steps_declared=spec.max_steps is not None,
            lo=lo,
            hi=hi,
            seeds=seeds,
            floor_margin=spec.floor_margin,
            step_timeout_s=spec.step_timeout_s,
            oracle=spec.oracle,
            has_manifest=has_manifest,
            probe_path=spec.probe_path,
            oracle_tolerance=spec.oracle_tolerance,
            blind_floor=spec.blind_floor,
            search_budget_s=(
                DEFAULT_SEARCH_BUDGET_S if opts.search_budget_s is None else opts.search_budget_s
            ),
        )

    @property
    def budget_s(self) -> float:
        """Seconds for the whole run (``--timeout``, else :data:`DEFAULT_BUDGET_S`)."""
        budget = self.timeouts.budget_s
        return budget if budget is not None else DEFAULT_BUDGET_S

    @property
    def reply_s(self) -> float:
        """Seconds allowed for each answer: twice ``step_timeout_s``, at least 2, at most
        ``--timeout`` (but >= 0.5); ``--reply-timeout`` when given."""
        return self.timeouts.reply_s

    @property
    def startup_s(self) -> float:
        """Seconds to wait for ``GET /health`` after start: ``--startup-timeout``, else the
        manifest's ``startup_timeout_s``, at most ``--timeout``."""
        return self.timeouts.startup_s


# -- why the stage stops ------------------------------------------------------------------------
class Stop(Exception):
    """The stage cannot go on; :func:`envkit.validation.rules.liveness.stopped` reports why."""


class OutOfTime(Stop):
    """The stage's budget (``Settings.budget_s``) is spent."""


class NoAnswer(Stop):
    """A request got no answer within ``Settings.reply_s``. ``what`` names the request."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


class ObservationTooLarge(Stop):
    """An answer's frame is over :data:`envkit.wire.MAX_OBSERVATION_BYTES` (eval's limit):
    every later call would carry as much, so nothing more is played.

    Attributes:
        what: the call, e.g. ``"`reset(seed=0)`"``. size: characters of its frame.
    """

    def __init__(self, what: str, size: int):
        super().__init__(what)
        self.what, self.size = what, size


class ServerDied(Stop):
    """The server envkit started exited (``exit_code``, last ``log_tail`` lines)."""

    def __init__(self, exit_code: int | None, log_tail: str):
        super().__init__(exit_code)
        self.exit_code = exit_code
        self.log_tail = log_tail


# -- what checks pass to each other -------------------------------------------------------------
def _bounded(res: StepResult, what: str) -> None:
    """Raises ObservationTooLarge when ``res``'s frame is over the limit."""
    if res.frame_bytes > MAX_OBSERVATION_BYTES:
        raise ObservationTooLarge(what, res.frame_bytes)


def is_number(value: object) -> TypeGuard[int | float]:
    """An int or float, not a bool (JSON numbers)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass
class Episode:
    """One played episode: the seed, the reset observation and every step answered.

    Attributes:
        seed: the reset seed.
        reset_obs: the observation ``reset`` answered.
        steps: every step answered, in order.
        done: the last step said ``done=true``.
        actions: the action of each answered step (``actions[i]`` earned ``steps[i]``).
        policy: who chose the actions (``fuzz``, ``oracle``, ``degenerate:empty``, ...).
        states: ``state`` after ``reset`` (``"reset"``) and after the last step (``"end"``),
            when the episode was played ``with_state``.
    """

    seed: int | None
    reset_obs: dict[str, Any]
    steps: list[StepResult] = field(default_factory=list)
    done: bool = False
    actions: list[dict[str, Any]] = field(default_factory=list)
    policy: str = ""
    states: dict[str, Any] = field(default_factory=dict)

    @property
    def rewards(self) -> list[Any]:
        return [s.reward for s in self.steps]

    def record(self, res: StepResult, action: dict[str, Any]) -> bool:
        """Add one answered step and the action that earned it; ``True`` when it ended the
        episode (``done``)."""
        self.steps.append(res)
        self.actions.append(action)
        self.done = bool(res.done)
        return self.done

    def best(self) -> float | None:
        """The best finite step reward, ``None`` when there is none."""
        nums = [float(r) for r in self.rewards if is_number(r) and math.isfinite(float(r))]
        return max(nums) if nums else None

    def trace(self) -> dict[str, Any]:
        """What two plays of the same episode must share: reset observation, rewards and
        observations (and ``state`` when it was recorded)."""
        out: dict[str, Any] = {
            "reset": self.reset_obs,
            "steps": [{"reward": x.reward, "observation": x.observation} for x in self.steps],
        }
        if self.states:
            out["state"] = self.states
        return out

    def sent_valid(self) -> bool:
        """Some step was accepted: answered, and not with a tool error for a tool call (an
        episode of refused calls never reached the grader)."""
        return any(
            not (shapes.is_tool_call(a) and shapes.tool_error(s.observation))
            for a, s in zip(self.actions, self.steps, strict=False)
        )

    def observations(self) -> list[dict[str, Any]]:
        """The reset observation, then every step's."""
        return [self.reset_obs] + [x.observation for x in self.steps]


class ActionPool:
    """The fuzzed actions (from the /schema action schema), reused cyclically."""

    def __init__(self, actions: list[dict[str, Any]]):
        self._actions = list(actions)

    def __bool__(self) -> bool:
        return bool(self._actions)

    def __len__(self) -> int:
        return len(self._actions)

    def at(self, i: int) -> dict[str, Any]:
        """A copy of action ``i`` (modulo the pool size)."""
        return dict(self._actions[i % len(self._actions)])


@dataclass(frozen=True)
class SeenReward:
    """A step reward as received, with the action that earned it."""

    reward: Any
    action: dict[str, Any]


Policy = Callable[[dict[str, Any], int], dict[str, Any]]  # (observation, step index) -> action
#: Called when an episode envkit plays ends (``done=true``): (session, episode); the session
#: is still open, so the callee may step the finished episode again.
EpisodeEnd = Callable[[EnvSession, "Episode"], None]


def is_capacity_reached(answer: dict[str, Any]) -> bool:
    data = answer.get("data") or {}
    return answer.get("type") == "error" and data.get("code") == "CAPACITY_REACHED"


MAX_RESET_FAILURES = 8  # kept per run: the first says what failed, the rest only count


@dataclass(frozen=True)
class ResetFailure:
    """A ``reset`` the server answered with an error frame.

    Attributes:
        seed: the seed sent (``None``: no seed, as ``reset()`` of a client sends).
        error: the error frame.
        health: GET /health's status right after (``None``: no answer).
    """

    seed: int | None
    error: EnvErrorFrame
    health: int | None


class ServerPlayer:
    """Plays one environment server over the wire for the runtime checks and collects their
    findings (not the Docker engine: that is :mod:`envkit.container._engine`).

    Args:
        settings: the resolved :class:`Settings`.
        progress: called with short progress lines.
        budget: the run's :class:`Budget`; ``None``: a fresh one of ``settings.budget_s``
            seconds from now.

    Attributes:
        findings: what the checks found, in order.
        checks_run: codes of the rules evaluated (passed or failed).
        timings: seconds by phase (``startup``, ``runtime``).
        url: base URL of the server being played.
        env_root: the environment's directory (``None``: a ``--url`` run without one); not
            the server's working directory, which is the parent folder when envkit starts
            the package form. The checks that run the environment's code (its server, its
            oracle, its probe plan) read it here.
        python: the interpreter that runs the environment's code (resolved once by the
            runtime stage; ``None``: a ``--url`` run without a directory).
        latencies: seconds of every step answered.
        rewards: every step reward answered, with its action.
        checks: names of the checks run through :meth:`guard`, in order.
        lost_sessions: ``(check, cause)`` of checks ended by a session failing.
        reset_failures: every ``reset`` that answered an error frame, with the seed and what
            GET /health answered right after (:class:`ResetFailure`); a check it ended is
            not an envkit crash.
        crashes: ``(check, error, traceback)`` of checks that raised inside envkit.
        launch: how the server envkit started was started (``None``: ``--url``), e.g.
            ``package form from the parent folder: uvicorn NAME.server.app:app in /x/envs``.
        notes: lines for the report (how the server was started, probes skipped and why).
        skipped: rule code -> why it could not be evaluated (:meth:`skip`).
        episodes: every episode played to its end or bound, by any policy (in order).
        on_episode_end: called when an episode ends with ``done=true`` (see
            :data:`EpisodeEnd`); the reward-after-done probe hooks in here.
        wanted: the rule codes the run selected (a predicate), ``None``: every code.
        unanswered: the HTTP requests (``"GET /metadata"``) that got no answer within the
            reply timeout, in order (their callers report EK422, not a broken route).
        budget: the run's deadline (see ``budget`` above).
        out_of_time: what the deadline left unplayed (``"the runtime stage"``, probe names),
            in order; the report skips the rules they decide with "the time ran out".
    """

    def __init__(
        self,
        settings: Settings,
        progress: Callable[[str], None] | None = None,
        budget: Budget | None = None,
    ):
        self.settings = settings
        self._progress = progress
        self.findings: list[Finding] = []
        self.checks_run: list[str] = []
        self.timings: dict[str, float] = {}
        self.url = ""
        self.server: ServerProcess | None = None
        self.env_root: Path | None = None
        self.python: str | None = None
        self.latencies: list[float] = []
        self.rewards: list[SeenReward] = []
        self.checks: list[str] = []
        self.lost_sessions: list[tuple[str, str]] = []
        self.reset_failures: list[ResetFailure] = []
        self.crashes: list[tuple[str, str, str]] = []
        self.launch: str | None = None
        self.notes: list[str] = []
        self.skipped: dict[str, str] = {}
        self.episodes: list[Episode] = []
        self.on_episode_end: EpisodeEnd | None = None
        self.wanted: Callable[[str], bool] | None = None
        self.out_of_time: list[str] = []  # what the deadline left unplayed (checks, probes)
        self.unanswered: list[str] = []
        self._watch: Callable[[dict[str, Any], str], None] | None = None
        self._http: httpx.Client | None = None
        self._post_http: httpx.Client | None = None
        # the run's budget when the caller has one (it also paid for a build or a static
        # stage), else a fresh one of ``settings.budget_s``
        self.budget = budget if budget is not None else Budget.start(settings.budget_s)

    # -- findings ---------------------------------------------------------------------------
    def progress(self, line: str) -> None:
        if self._progress:
            self._progress(line)

    def add(self, rule: Rule, message: str, **data: object) -> None:
        """Record a finding of ``rule`` (its default severity)."""
        self.findings.append(rule.finding(message, **data))

    def ran(self, *rules: Rule) -> None:
        """Record that ``rules`` were evaluated (a rule with no finding then passes)."""
        for rule in rules:
            if rule.code not in self.checks_run:
                self.checks_run.append(rule.code)

    def unran(self, *rules: Rule) -> None:
        for rule in rules:
            if rule.code in self.checks_run:
                self.checks_run.remove(rule.code)

    def wants(self, *codes: str) -> bool:
        """Whether the run wants any of ``codes`` (``--select``/``--ignore`` and the
        configuration; :attr:`wanted`): a check none of whose codes is wanted is not
        played."""
        return self.wanted is None or any(self.wanted(c) for c in codes)

    def skip(self, rule: Rule, reason: str) -> None:
        """Record that ``rule`` could not be evaluated and why (shown in the report's
        skipped checks); it is no longer counted as run."""
        self.unran(rule)
        self.skipped[rule.code] = reason

    def has(self, rule: Rule) -> bool:
        return any(f.code == rule.code for f in self.findings)

    # -- the server -------------------------------------------------------------------------
    def start_server(self, app: str) -> None:
        """Start the environment's server (``app`` from :attr:`env_root`, in
        :attr:`python`) and wait for ``GET /health``.

        Raises:
            ServerStartError: it exited or did not answer within ``settings.startup_s``.
            ValueError: :attr:`env_root` or :attr:`python` is not set.
        """
        if self.env_root is None or self.python is None:
            raise ValueError("start_server needs env_root and python")
        # never wait past the run's deadline (the static stage already spent some of it)
        wait_s = max(0.1, min(self.settings.startup_s, self.remaining_s()))
        t = time.perf_counter()
        try:
            self.server = start_server(self.env_root, app, python=self.python)
            self.server.wait_healthy(timeout_s=wait_s)
        finally:
            self.timings["startup"] = round(time.perf_counter() - t, 3)
        self.url = self.server.url
        cand = self.server.candidate
        if cand is not None:
            self.launch = cand.describe()
            if self.server.attempts:  # not the manifest form: say which one worked
                self.notes.append(
                    f"started with the {self.launch} (after {len(self.server.attempts)} "
                    "way(s) that exited: "
                    + "; ".join(
                        f"{a.command} -> {a.cause.line if a.cause else a.exit_code}"
                        for a in self.server.attempts
                    )
                    + ")"
                )

    def close(self) -> None:
        """Close the HTTP client and stop the server envkit started (its process group)."""
        for client in (self._http, self._post_http):
            if client is not None:
                client.close()
        self._http = self._post_http = None
        if self.server is not None:
            self.server.stop(grace_s=STOP_GRACE_S)

    # -- stops ------------------------------------------------------------------------------
    def remaining_s(self) -> float:
        """Seconds left of the stage's budget (``--timeout``), at least 0."""
        return self.budget.remaining_s()

    def check_budget(self) -> None:
        """Raises OutOfTime when the stage's budget is spent."""
        if time.monotonic() > self.budget.deadline:
            raise OutOfTime

    def check_alive(self) -> None:
        """Raises ServerDied when the server envkit started has exited."""
        if self.server is not None and not self.server.alive():
            raise ServerDied(self.server.popen.returncode, self.server.log_tail(20))

    def _wire_failure(self, exc: WireError, what: str) -> None:
        """A hang or a crash stops the stage; other transport failures are the caller's."""
        time.sleep(0.05)  # let a crashing server finish exiting
        self.check_alive()
        if isinstance(exc, WireTimeout):
            raise NoAnswer(what) from None

    # -- HTTP -------------------------------------------------------------------------------
    def get(self, path: str) -> tuple[int | None, Any, str]:
        """``GET url+path``: ``(status, JSON body or None, text)``; ``status`` is ``None``
        when no answer came (``text`` says why)."""
        if self._http is None:
            self._http = httpx.Client(timeout=self.settings.reply_s, trust_env=False, verify=tls())
        return self._request(self._http, "GET", path, 200)

    def post(self, path: str, payload: object) -> tuple[int | None, str]:
        """``POST url+path`` with a JSON body on a fresh connection (uvicorn drops keep-alive
        after a 500): ``(status or None, text)``; :meth:`post_json` without the parsed body."""
        status, _body, text = self.post_json(path, payload)
        return status, text

    def post_client(self) -> httpx.Client:
        """The ``httpx.Client`` every POST of the stage goes through: ``Connection: close``,
        so each request has a fresh connection (uvicorn drops keep-alive after a 500), but
        one client, because each costs a connection pool and a run POSTs dozens of times. Closed by :meth:`close`."""
        if self._post_http is None:
            self._post_http = httpx.Client(
                timeout=self.settings.reply_s,
                trust_env=False,
                headers={"Connection": "close"},
                verify=tls(),
            )
        return self._post_http

    def post_json(self, path: str, payload: object) -> tuple[int | None, Any, str]:
        """:meth:`post`, with the JSON body parsed: ``(status or None, body or None, text)``
        (``text`` cut at 300 characters)."""
        return self._request(self.post_client(), "POST", path, 300, body=payload)

    def _request(
        self, client: httpx.Client, method: str, path: str, limit: int, *, body: object = None
    ) -> tuple[int | None, Any, str]:
        """One HTTP request of :meth:`get` / :meth:`post_json`: ``(status or None, JSON body
        or None, text cut at ``limit`` characters or why no answer came)``."""
        self.check_budget()
        try:
            r = client.request(method, self.url + path, json=body)
        except httpx.TimeoutException:
            self.check_alive()
            self.unanswered.append(f"{method} {path}")
            return None, None, no_answer(f"`{method} {path}`", self.settings.reply_s)
        except httpx.HTTPError as exc:
            self.check_alive()
            return None, None, f"{type(exc).__name__}: {exc}"
        try:
            body = r.json()
        except ValueError:
            body = None
        return r.status_code, body, r.text[:limit]

    # -- sessions ---------------------------------------------------------------------------
    def connect(self, *, reply_s: float | None = None) -> EnvSession:
        """A new WS session, not probed (the capacity check probes it itself); ``reply_s``:
        seconds each answer may take (default ``Settings.reply_s``).

        Raises:
            WireError: cannot connect.
        """
        self.check_budget()
        return EnvSession(self.url, timeout_s=reply_s or self.settings.reply_s)

    def open(self, *, retry_s: float = 3.0, reply_s: float | None = None) -> EnvSession:
        """A new WS session known to be accepted (a ``state`` probe answered); ``reply_s`` as
        :meth:`connect`.

        Retries for ``retry_s`` seconds while the server answers CAPACITY_REACHED (a session
        just closed may still hold its slot for a moment).

        Raises:
            EnvErrorFrame: still CAPACITY_REACHED after ``retry_s``.
            WireError: cannot connect (a hang or a crash stops the stage instead).
        """
        end = time.monotonic() + retry_s
        while True:
            try:
                s = self.connect(reply_s=reply_s)
            except WireError as exc:
                self._wire_failure(exc, "Opening a WebSocket session")
                raise
            try:
                answer = probe_frame(s)
            except WireError as exc:
                s.close()
                self._wire_failure(exc, "`state` on a new session")
                raise
            if is_capacity_reached(answer):
                s.close()
                if time.monotonic() < end:
                    time.sleep(0.05)
                    continue
                raise EnvErrorFrame(answer.get("data") or {})
            return s

    def call(self, what: str, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run one session call; a hang or a crash stops the stage, other transport failures
        propagate as WireError (error frames as EnvErrorFrame)."""
        self.check_budget()
        try:
            return fn(*args, **kwargs)
        except EnvErrorFrame:
            raise
        except WireError as exc:
            self._wire_failure(exc, what)
            raise

    def watch_observations(self, watch: Callable[[dict[str, Any], str], None] | None) -> None:
        """Call ``watch(observation, "reset" | "step")`` on every observation answered."""
        self._watch = watch

    def reset(self, s: EnvSession, seed: int | None, episode_id: str | None = None) -> StepResult:
        """``reset`` on ``s``; an error frame is recorded in :attr:`reset_failures` (with
        /health's status then) and raised.

        Raises:
            EnvErrorFrame: the server answered ``reset`` with an error frame.
        """
        try:
            res = self.call("`reset`", s.reset, seed=seed, episode_id=episode_id)
        except EnvErrorFrame as exc:
            if len(self.reset_failures) < MAX_RESET_FAILURES:
                status, _body, _text = self.get("/health")
                self.reset_failures.append(ResetFailure(seed, exc, status))
            raise
        _bounded(res, f"`reset(seed={seed})`")
        if self._watch is not None:
            self._watch(res.observation, "reset")
        return res

    def reset_failure(self, exc: BaseException) -> ResetFailure | None:
        """The recorded :class:`ResetFailure` whose error frame ``exc`` is (``None``: ``exc``
        did not come from a ``reset``)."""
        return next((f for f in self.reset_failures if f.error is exc), None)

    def step(self, s: EnvSession, action: dict[str, Any]) -> StepResult:
        """A step whose answer is recorded (latency, reward with its action, observation)."""
        res = self.call("`step`", s.step, action)
        _bounded(res, "`step`")
        self.latencies.append(res.latency_s)
        self.rewards.append(SeenReward(res.reward, action))
        if self._watch is not None:
            self._watch(res.observation, "step")
        return res

    def play_episode(
        self,
        s: EnvSession,
        seed: int | None,
        policy: Policy,
        episode_id: str | None = None,
        *,
        name: str = "",
        with_state: bool = False,
        max_steps: int | None = None,
        until: float | None = None,
    ) -> Episode:
        """Reset with ``seed`` and step ``policy``'s actions until ``done`` or ``max_steps``.
        A step that raised (EXECUTION_ERROR) is skipped. The episode is added to
        :attr:`episodes`; when it ends with ``done``, :attr:`on_episode_end` is called.

        Args:
            name: who the policy is (``Episode.policy``).
            with_state: also record ``state`` after ``reset`` and after the last step.
            max_steps: steps at most (default ``settings.max_steps``).
            until: a ``time.monotonic()`` deadline: no step is sent after it (the episode
                is then recorded unfinished).

        Raises:
            EnvErrorFrame: ``reset`` failed, or another error frame than EXECUTION_ERROR.
        """
        first = self.reset(s, seed, episode_id)
        ep = Episode(seed, first.observation, policy=name)
        if with_state:
            ep.states["reset"] = self.call("`state`", s.state)
        obs = first.observation
        for i in range(self.settings.max_steps if max_steps is None else max_steps):
            if until is not None and time.monotonic() > until:
                break
            action = policy(obs, i)
            try:
                res = self.step(s, action)
            except EnvErrorFrame as exc:
                if exc.code == "EXECUTION_ERROR":
                    continue
                raise
            obs = res.observation
            if ep.record(res, action):
                break
        if with_state:
            ep.states["end"] = self.call("`state`", s.state)
        self.ended(s, ep)
        return ep

    def ended(self, s: EnvSession, ep: Episode) -> None:
        """Record a played episode; call :attr:`on_episode_end` when it ended with ``done``
        (the session still open)."""
        self.episodes.append(ep)
        if ep.done and self.on_episode_end is not None:
            self.on_episode_end(s, ep)

    def play_alone(
        self,
        seed: int | None,
        policy: Policy,
        *,
        name: str = "",
        with_state: bool = False,
        max_steps: int | None = None,
        until: float | None = None,
    ) -> Episode:
        """:meth:`play_episode` on a session of its own."""
        s = self.open()
        try:
            return self.play_episode(
                s, seed, policy, name=name, with_state=with_state, max_steps=max_steps, until=until
            )
        finally:
            s.close()

    # -- guarding checks --------------------------------------------------------------------
    def guard(
        self,
        name: str,
        check: Callable[..., T],
        *args: object,
        quiet: bool = False,
        codes: tuple[str, ...] = (),
    ) -> T | None:
        """Run one check; whatever it does not handle ends the check, not the stage.

        ``name`` is shown as a progress line (unless ``quiet``) and names the check in
        findings. ``codes``: the rule codes the check plays for, when it feeds no other
        check; none of them wanted (:meth:`wants`): it is not played.

        A server at capacity skips the check; a session that fails is recorded in
        :attr:`lost_sessions`; an exception inside envkit's check is recorded in
        :attr:`crashes` (the stage goes on). :class:`Stop` propagates.

        Returns:
            The check's result, ``None`` when it did not finish or was not played.
        """
        if codes and not self.wants(*codes):
            return None
        if not quiet:
            self.progress(name)
        self.checks.append(name)
        try:
            return check(*args)
        except Stop:
            raise
        except EnvErrorFrame as exc:
            if exc.code == "CAPACITY_REACHED":
                self.progress(f"{name}: skipped (server at capacity)")
                return None
            if self.reset_failure(exc) is not None:  # the environment's, not ours
                self.notes.append(f"{name}: not finished, `reset` failed ({exc.code})")
                return None
            self._crashed(name, f"an error frame the check does not handle: {exc.message}")
        except WireError as exc:
            self.check_alive()
            self.lost_sessions.append((name, exc.message))
        except Exception as exc:  # noqa: BLE001 - a bug in one check must not end the stage
            self._crashed(name, f"{type(exc).__name__}: {exc}")
        return None

    def _crashed(self, name: str, error: str) -> None:
        tb = traceback.format_exc() if os.environ.get("ENVKIT_DEBUG") == "1" else ""
        self.crashes.append((name, error, tb))
