"""The runtime stage of ``envkit validate``: start (or reach) a server and play it over the wire.

Issue #3, rules EK4xx (runtime and protocol) and EK5xx (reward integrity). The environment is
played only through the OpenEnv contract (../shared/PROTOCOL.md): HTTP ``/health``,
``/schema``, ``/metadata``, ``/step`` and WebSocket ``/ws`` sessions. Environment code never
runs inside envkit: the oracle runs in the environment's interpreter
(:class:`envkit.policy.PolicyProcess`).

Order of play (each step feeds the later ones; a hang or a crash stops the stage with a
finding and the server is always stopped):

1. HTTP endpoints: ``/health``, ``/schema`` (meta-schema checked), ``/metadata``.
2. A WS round trip: reset (seed, episode_id) -> state -> step -> state -> close.
3. Step before reset (WS and ``POST /step``), invalid actions (WS VALIDATION_ERROR, HTTP
   422), malformed frames.
4. Fuzzed episodes (hypothesis-jsonschema actions), then shrinking any action that raised.
5. Determinism: every seed twice with the same actions; seeds compared with each other.
6. The oracle (``validation.oracle``), then degenerate policies against it.
7. Concurrency (interleaved vs sequential) and capacity (CAPACITY_REACHED).
8. Reward-wide and latency-wide verdicts (NaN, range, constant, p95).
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.errors import ServerStartError, WireError
from envkit.findings import Finding, Rule
from envkit.manifest import EnvSpec, Manifest
from envkit.validation import fuzz
from envkit.validation.rules import reward as R5
from envkit.validation.rules import runtime as R4
from envkit.wire import EnvErrorFrame, EnvSession, StepResult, WireTimeout, normalise_url

DEFAULT_MAX_STEPS = 50  # episode bound when validation.max_steps is not declared
CAPACITY_PROBE_LIMIT = 64  # sessions opened at most when looking for CAPACITY_REACHED
ACTION_POOL = 100  # fuzzed actions generated at most (reused cyclically beyond)
STOP_GRACE_S = 1.0  # SIGTERM grace before SIGKILL (uvicorn waits for in-flight steps)
DEFAULT_BUDGET_S = 600.0  # whole runtime stage when --timeout is not given
_EPS = 1e-9


@dataclass
class RuntimeTarget:
    """What the runtime stage plays.

    Attributes:
        url: a running server (``--url``), else ``None``.
        root: environment directory: envkit starts its server from ``manifest.app`` and stops
            it afterwards. Ignored when ``url`` is set.
        manifest: the parsed ``openenv.yaml``; ``None`` for a pure ``--url`` run
            (:class:`~envkit.manifest.EnvSpec` defaults apply, no oracle).
        python: interpreter for the server and the oracle (``--python``; see
            :func:`envkit.project.resolve_python`).
    """

    url: str | None
    root: Path | None
    manifest: Manifest | None
    python: str | None


@dataclass
class RuntimeOutcome:
    """What the runtime stage found.

    Attributes:
        findings: EK4xx/EK5xx findings (stage ``runtime``; severities are the rules'
            defaults, the caller applies overrides).
        checks_run: codes of the runtime rules evaluated (passed or failed).
        timings: seconds, e.g. ``{"startup": 4.1, "runtime": 9.8}``.
    """

    findings: list[Finding]
    checks_run: list[str]
    timings: dict[str, float]


class _Abort(Exception):
    """Stop the stage: the finding explaining why has been recorded."""


@dataclass
class _Episode:
    seed: int | None
    reset_obs: dict[str, Any]
    steps: list[StepResult] = field(default_factory=list)
    done: bool = False

    @property
    def rewards(self) -> list[Any]:
        return [s.reward for s in self.steps]

    def best(self) -> float | None:
        nums = [float(r) for r in self.rewards if _is_number(r) and math.isfinite(float(r))]
        return max(nums) if nums else None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _probe(s: EnvSession) -> dict[str, Any]:
    """Send `state` on a new session and return the answer. A server at capacity sends its
    CAPACITY_REACHED frame and closes at once, possibly before the probe is sent: the frame
    is still read from the buffer."""
    try:
        s.send_raw(json.dumps({"type": "state"}))
    except WireError:
        return s.recv(0.5)
    return s.recv()


def _fmt(value: Any) -> str:
    return fuzz.short_json(value, 80)


def run_runtime(target: RuntimeTarget, *, episodes: int = 5, seed: int = 0,
                timeout_s: float | None = None,
                progress: Callable[[str], None] | None = None) -> RuntimeOutcome:
    """Run the runtime checks (EK4xx, EK5xx) against ``target``.

    Never raises for a misbehaving environment: a server that does not start, hangs,
    crashes or floods becomes a finding. With ``target.root`` (and no ``url``) the server is
    started on a free 127.0.0.1 port and always stopped, with its whole process group.

    Args:
        target: what to play.
        episodes: fuzzed episodes (>= 1); each has at most ``validation.max_steps`` steps
            (50 when not declared).
        seed: seed of the action generator; the same seed gives the same actions.
        timeout_s: seconds; when given, the server's startup timeout (instead of
            ``validation.startup_timeout_s``), the cap of every request's timeout, and the
            budget of the whole stage.
        progress: called with short progress lines.

    Returns:
        The :class:`RuntimeOutcome`.

    Raises:
        UsageError: ``target.python`` is not an executable, or neither ``url`` nor ``root``
            is given.
    """
    from envkit.errors import UsageError

    if not target.url and target.root is None:
        raise UsageError("The runtime stage needs a URL or an environment directory.",
                         hint="Pass PATH or --url.")
    run = _Run(target, episodes=max(1, episodes), seed=seed, timeout_s=timeout_s,
               progress=progress)
    return run.execute()


class _Run:
    """One runtime stage: state shared by the checks."""

    def __init__(self, target: RuntimeTarget, *, episodes: int, seed: int,
                 timeout_s: float | None, progress: Callable[[str], None] | None):
        self.target = target
        self.spec: EnvSpec = (target.manifest.spec if target.manifest
                              else EnvSpec())
        self.episodes = episodes
        self.seed = seed
        self.timeout_s = timeout_s
        self._progress = progress
        self.findings: list[Finding] = []
        self.checks_run: list[str] = []
        self.timings: dict[str, float] = {}
        self.server: Any = None
        self.url = ""
        self.reply_s = max(2.0, 2 * self.spec.step_timeout_s)
        if timeout_s is not None:
            self.reply_s = min(self.reply_s, max(timeout_s, 0.5))
        self.deadline = time.monotonic() + (timeout_s if timeout_s is not None
                                            else DEFAULT_BUDGET_S)
        self.max_steps = self.spec.max_steps or DEFAULT_MAX_STEPS
        self.lo, self.hi = (float(x) for x in self.spec.reward_range)
        seeds = list(dict.fromkeys(self.spec.seeds)) or [0]
        self.seeds = seeds[:3]
        # filled as the stage goes
        self.action_schema: dict[str, Any] | None = None
        self.obs_validator: Any = None
        self.actions: list[dict[str, Any]] = []
        self.latencies: list[float] = []
        self.step_rewards: list[Any] = []
        self.reward_issues: dict[str, tuple[int, str]] = {}  # code -> (count, first message)
        self.obs_issue: tuple[int, str] | None = None
        self.capacity: int | None = None
        self.deterministic = False
        self.oracle_best: float | None = None
        self.reset_broken = False

    # -- plumbing --------------------------------------------------------------------------
    def progress(self, line: str) -> None:
        if self._progress:
            self._progress(line)

    def add(self, rule: Rule, message: str, **data: Any) -> None:
        self.findings.append(rule.finding(message, **data))

    def ran(self, *rules: Rule) -> None:
        for rule in rules:
            if rule.code not in self.checks_run:
                self.checks_run.append(rule.code)

    def has(self, rule: Rule) -> bool:
        return any(f.code == rule.code for f in self.findings)

    def _check_budget(self) -> None:
        if time.monotonic() > self.deadline:
            self.add(R4.ENV_UNRESPONSIVE,
                     f"The runtime stage must finish within {self.timeout_s or DEFAULT_BUDGET_S:g} "
                     "s; it ran out of time. Most likely `step` or `reset` is slow.",
                     fix="Make `step`/`reset` faster, or raise --timeout.")
            self.ran(R4.ENV_UNRESPONSIVE)
            raise _Abort

    def _server_gone(self) -> bool:
        return self.server is not None and not self.server.alive()

    def _check_alive(self) -> None:
        if self._server_gone():
            code = self.server.popen.returncode
            tail = self.server.log_tail(20)
            self.add(R4.SERVER_DIED,
                     f"The server process must keep running; it exited with code {code} "
                     f"during the runtime stage. Log tail:\n{tail}".rstrip(),
                     log_tail=tail, exit_code=code)
            self.ran(R4.SERVER_DIED)
            raise _Abort

    def wire_failure(self, exc: WireError, what: str) -> None:
        """Turn a transport failure into the right finding; aborts on a hang or a crash."""
        time.sleep(0.05)  # let a crashing server finish exiting
        self._check_alive()
        if isinstance(exc, WireTimeout):
            self.add(R4.ENV_UNRESPONSIVE,
                     f"{what} must answer within {self.reply_s:g} s; no answer came. Most "
                     "likely the environment blocks (an endless loop, a call without a "
                     "timeout).", request=what)
            self.ran(R4.ENV_UNRESPONSIVE)
            raise _Abort

    def open(self, *, retry_s: float = 3.0) -> EnvSession:
        """A new WS session known to be accepted (a `state` probe answered).

        Retries for ``retry_s`` seconds while the server answers CAPACITY_REACHED (a session
        just closed may still hold its slot for a moment).

        Raises:
            EnvErrorFrame: still CAPACITY_REACHED after ``retry_s``.
            WireError: cannot connect (a hang or a crash aborts the stage instead).
        """
        self._check_budget()
        end = time.monotonic() + retry_s
        while True:
            try:
                s = EnvSession(self.url, timeout_s=self.reply_s)
            except WireError as exc:
                self.wire_failure(exc, "Opening a WebSocket session")
                raise
            try:
                answer = _probe(s)
            except WireError as exc:
                s.close()
                self.wire_failure(exc, "`state` on a new session")
                raise
            data = answer.get("data") or {}
            if answer.get("type") == "error" and data.get("code") == "CAPACITY_REACHED":
                s.close()
                if time.monotonic() < end:
                    time.sleep(0.05)
                    continue
                raise EnvErrorFrame(data)
            return s

    def call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run one session call; hangs and crashes abort the stage, other transport
        failures propagate as WireError."""
        self._check_budget()
        try:
            return fn(*args, **kwargs)
        except EnvErrorFrame:
            raise
        except WireError as exc:
            self.wire_failure(exc, what)
            raise

    def step(self, s: EnvSession, action: dict[str, Any]) -> StepResult:
        """A step whose answer is recorded (latency, reward, observation schema)."""
        res: StepResult = self.call("`step`", s.step, action)
        self.latencies.append(res.latency_s)
        self.note_reward(res.reward, action)
        self.note_observation(res.observation, "step")
        return res

    def reset(self, s: EnvSession, seed: int | None, episode_id: str | None = None) -> StepResult:
        res: StepResult = self.call("`reset`", s.reset, seed=seed, episode_id=episode_id)
        self.note_observation(res.observation, "reset")
        return res

    def note_reward(self, reward: Any, action: dict[str, Any]) -> None:
        self.step_rewards.append(reward)
        if reward is None:
            self._reward_issue(R5.REWARD_NOT_FINITE,
                               f"got `null` after action {_fmt(action)}")
        elif not _is_number(reward):
            self._reward_issue(R5.REWARD_NOT_NUMERIC,
                               f"got {_fmt(reward)} ({type(reward).__name__}) after action "
                               f"{_fmt(action)}")
        elif not (self.lo - _EPS <= float(reward) <= self.hi + _EPS):
            self._reward_issue(R5.REWARD_OUT_OF_RANGE,
                               f"got {reward!r} after action {_fmt(action)}")

    def _reward_issue(self, rule: Rule, text: str) -> None:
        count, first = self.reward_issues.get(rule.code, (0, text))
        self.reward_issues[rule.code] = (count + 1, first)

    def note_observation(self, obs: Any, where: str) -> None:
        if self.obs_validator is None:
            return
        try:
            err = next(iter(self.obs_validator.iter_errors(obs)), None)
        except Exception:  # noqa: BLE001 - a broken schema is EK403's business
            return
        if err is not None:
            path = ".".join(str(p) for p in err.absolute_path) or "(observation)"
            text = (f"`{path}` after `{where}`: {err.message} (observation "
                    f"{_fmt(obs)})")
            count, first = self.obs_issue or (0, text)
            self.obs_issue = (count + 1, first)

    def action(self, i: int) -> dict[str, Any]:
        return dict(self.actions[i % len(self.actions)])

    def guarded(self, name: str, fn: Callable[[], None]) -> None:
        """Run one check; transport errors it did not handle end the check, not the stage."""
        self.progress(name)
        try:
            fn()
        except _Abort:
            raise
        except EnvErrorFrame as exc:
            if exc.code == "CAPACITY_REACHED":
                self.progress(f"{name}: skipped (server at capacity)")
                return
            raise
        except WireError as exc:
            self._check_alive()
            if not self.has(R4.ROUND_TRIP_FAILED):
                self.add(R4.ROUND_TRIP_FAILED,
                         f"Sessions must stay usable; during {name} the session failed: "
                         f"{exc.message}", check=name)
            self.ran(R4.ROUND_TRIP_FAILED)

    # -- the stage -------------------------------------------------------------------------
    def execute(self) -> RuntimeOutcome:
        t0 = time.perf_counter()
        try:
            if self.target.url:
                self.url = normalise_url(self.target.url)
            else:
                self._start_server()
            if self.url:
                self._play()
        except _Abort:
            pass
        finally:
            if self.server is not None:
                self.server.stop(grace_s=STOP_GRACE_S)
            self.timings["runtime"] = round(time.perf_counter() - t0, 3)
        return RuntimeOutcome(self.findings, self.checks_run, self.timings)

    def _start_server(self) -> None:
        from envkit.project import resolve_python
        from envkit.server import start_server

        root = self.target.root
        assert root is not None
        manifest = self.target.manifest
        app = manifest.app if manifest else "server.app:app"
        startup = self.timeout_s if self.timeout_s is not None else self.spec.startup_timeout_s
        self.python = resolve_python(root, self.target.python)
        self.progress(f"starting `{app}` with {self.python}")
        self.ran(R4.SERVER_START_FAILED)
        t = time.perf_counter()
        try:
            self.server = start_server(root, app, python=self.python)
            self.server.wait_healthy(timeout_s=startup)
        except ServerStartError as exc:
            tail = (exc.details or "").strip()
            self.add(R4.SERVER_START_FAILED,
                     f"The server must answer GET /health within {startup:g} s; "
                     f"{exc.message[0].lower()}{exc.message[1:]}"
                     + (f" Log tail:\n{tail}" if tail else ""),
                     log_tail=tail)
            raise _Abort from None
        finally:
            self.timings["startup"] = round(time.perf_counter() - t, 3)
        self.url = self.server.url

    def _play(self) -> None:
        import httpx

        with httpx.Client(timeout=self.reply_s, trust_env=False) as http:
            self.http = http
            self._http_checks()
            self.guarded("round trip", self._round_trip)
            if self.reset_broken:
                return
            have_actions = bool(self.actions)
            if have_actions:
                self.guarded("step before reset", self._step_before_reset)
                self.guarded("invalid actions", self._invalid_actions)
            self.guarded("malformed frames", self._malformed_frames)
            if have_actions:
                self.guarded("fuzzed episodes", self._fuzz)
                self.guarded("determinism", self._determinism)
                self.guarded("oracle", self._oracle)
                self.guarded("degenerate policies", self._degenerate)
                self.guarded("concurrent sessions", self._concurrency)
            self.guarded("capacity", self._capacity)
            self._verdicts()

    # -- 1. HTTP ---------------------------------------------------------------------------
    def _get(self, path: str) -> tuple[int | None, Any, str]:
        """(status, json-or-None, error text)."""
        import httpx

        self._check_budget()
        try:
            r = self.http.get(self.url + path)
        except httpx.TimeoutException:
            self._check_alive()
            return None, None, f"no answer within {self.reply_s:g} s"
        except httpx.HTTPError as exc:
            self._check_alive()
            return None, None, f"{type(exc).__name__}: {exc}"
        try:
            body = r.json()
        except ValueError:
            body = None
        return r.status_code, body, r.text[:200]

    def _http_checks(self) -> None:
        self.progress("checking /health, /schema, /metadata")
        status, body, text = self._get("/health")
        self.ran(R4.HEALTH_BROKEN)
        if status is None:
            self.add(R4.HEALTH_BROKEN, f"GET {self.url}/health must answer 200; {text}. Is the "
                     "server running at this URL?")
            raise _Abort
        if status != 200 or not isinstance(body, dict) or body.get("status", "healthy") != "healthy":
            self.add(R4.HEALTH_BROKEN,
                     f"GET /health must answer 200 with {{\"status\": \"healthy\"}}; got "
                     f"{status} {fuzz.short_json(body) if body is not None else repr(text)}.")

        status, body, text = self._get("/schema")
        self.ran(R4.SCHEMA_INVALID)
        problems: list[str] = []
        if status != 200 or not isinstance(body, dict):
            problems.append(f"GET /schema answered {status} "
                            f"{fuzz.short_json(body) if body is not None else repr(text)}")
            body = {}
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import validator_for

        for key in ("action", "observation"):
            sub = body.get(key) if isinstance(body, dict) else None
            if not isinstance(sub, dict):
                if body:
                    problems.append(f"`{key}` is missing or not an object")
                continue
            cls = validator_for(sub)
            try:
                cls.check_schema(sub)
            except SchemaError as exc:
                where = "/".join(str(p) for p in exc.path) or "(root)"
                problems.append(f"`{key}` is not a valid JSON Schema at {where}: {exc.message}")
                continue
            if key == "action":
                self.action_schema = sub
            else:
                obs_schema = dict(sub)
                req = [r for r in obs_schema.get("required") or []
                       if r not in ("reward", "done", "metadata")]
                obs_schema["required"] = req
                self.obs_validator = cls(obs_schema)
        if problems:
            self.add(R4.SCHEMA_INVALID, "GET /schema must give valid JSON Schemas for "
                     "`action` and `observation`; " + "; ".join(problems) + ".")
        if self.action_schema is not None:
            try:
                count = min(self.episodes * self.max_steps, ACTION_POOL)
                self.actions = fuzz.generate_actions(self.action_schema, max(count, 4), self.seed)
            except ValueError as exc:
                self.progress(f"cannot fuzz: {exc}")
                self.actions = []
            if not self.actions:
                minimal = fuzz.extreme_value(fuzz.action_schema(self.action_schema),
                                             fuzz.action_schema(self.action_schema), "empty")
                self.actions = [minimal] if isinstance(minimal, dict) else []

        status, body, text = self._get("/metadata")
        self.ran(R4.METADATA_BROKEN)
        if status != 200 or not isinstance(body, dict) or not isinstance(body.get("name"), str):
            self.add(R4.METADATA_BROKEN,
                     f"GET /metadata must answer 200 with a JSON object holding `name`; got "
                     f"{status} {fuzz.short_json(body) if body is not None else repr(text)}.")

    # -- 2. round trip ---------------------------------------------------------------------
    def _round_trip(self) -> None:
        eid = f"envkit-{uuid.uuid4().hex[:12]}"
        s = self.open()
        try:
            try:
                first = self.reset(s, self.seeds[0], episode_id=eid)
            except EnvErrorFrame as exc:
                self._reset_failed(exc)
                return
            self.ran(R4.ROUND_TRIP_FAILED, R4.EPISODE_ID_IGNORED, R4.STEP_COUNT_WRONG,
                     R4.HEALTH_WHILE_RESET_FAILS)
            if not isinstance(first.raw.get("observation"), dict) or "done" not in first.raw:
                self.add(R4.ROUND_TRIP_FAILED,
                         "`reset` must answer an `observation` frame with `observation`, "
                         f"`reward` and `done`; got {_fmt(first.raw)}.")
            state = self.call("`state`", s.state)
            self._check_state(state, eid, 0, "after `reset`")
            if self.actions:
                try:
                    self.step(s, self.action(0))
                    state = self.call("`state`", s.state)
                    self._check_state(state, eid, 1, "after 1 step")
                except EnvErrorFrame:
                    pass  # an action raising is EK410's business (fuzz)
        finally:
            s.close()

    def _check_state(self, state: dict[str, Any], eid: str | None, steps: int | None,
                     when: str) -> None:
        if not isinstance(state, dict) or "step_count" not in state:
            if not self.has(R4.ROUND_TRIP_FAILED):
                self.add(R4.ROUND_TRIP_FAILED, f"`state` must answer an object with "
                         f"`episode_id` and `step_count`; got {_fmt(state)} {when}.")
            return
        if eid is not None and state.get("episode_id") != eid and not self.has(
                R4.EPISODE_ID_IGNORED):
            self.add(R4.EPISODE_ID_IGNORED,
                     f"`reset(episode_id=\"{eid}\")` must set `state.episode_id` to it; got "
                     f"{_fmt(state.get('episode_id'))}. Most likely `reset()` ignores "
                     "`episode_id`.")
        if steps is not None and state.get("step_count") != steps and not self.has(
                R4.STEP_COUNT_WRONG):
            self.add(R4.STEP_COUNT_WRONG,
                     f"`state.step_count` must be {steps} {when}; got "
                     f"{_fmt(state.get('step_count'))}. Most likely `step_count` is not reset "
                     "in `reset` or not incremented in `step`.")

    def _reset_failed(self, exc: EnvErrorFrame) -> None:
        self.reset_broken = True
        status, body, _ = self._get("/health")
        self.ran(R4.HEALTH_WHILE_RESET_FAILS)
        message = str(exc.data.get("message", ""))[:300]
        if status == 200:
            self.add(R4.HEALTH_WHILE_RESET_FAILS,
                     f"`reset(seed={self.seeds[0]})` must succeed when GET /health says "
                     f"healthy; /health answered 200 but `reset` answered {exc.code}: "
                     f"{message!r}. Health must not be trusted alone.", error=message)
        else:
            self.add(R4.ROUND_TRIP_FAILED, f"`reset` must answer an observation; it "
                     f"answered {exc.code}: {message!r}.")
            self.ran(R4.ROUND_TRIP_FAILED)

    # -- 3. robustness ---------------------------------------------------------------------
    def _http_post(self, path: str, payload: Any) -> tuple[int | None, str]:
        """POST on a fresh connection (uvicorn drops keep-alive after a 500: PROTOCOL.md)."""
        import httpx

        self._check_budget()
        try:
            with httpx.Client(timeout=self.reply_s, trust_env=False,
                              headers={"Connection": "close"}) as c:
                r = c.post(self.url + path, json=payload)
            return r.status_code, r.text[:300]
        except httpx.TimeoutException:
            self._check_alive()
            return None, f"no answer within {self.reply_s:g} s"
        except httpx.HTTPError as exc:
            self._check_alive()
            return None, f"{type(exc).__name__}: {exc}"

    def _step_before_reset(self) -> None:
        action = self.action(0)
        problems: list[str] = []
        s = self.open()
        try:
            try:
                self.call("`step` before `reset`", s.step, action)
            except EnvErrorFrame as exc:
                if exc.code == "EXECUTION_ERROR":
                    problems.append(f"over /ws it raised: "
                                    f"{str(exc.data.get('message', ''))[:200]!r}")
            except WireError as exc:
                problems.append(f"over /ws the session closed: {exc.message}")
        finally:
            s.close()
        status, text = self._http_post("/step", {"action": action})
        if status is not None and status >= 500:
            problems.append(f"`POST /step` (a fresh, never reset instance) answered {status}")
        self.ran(R4.STEP_BEFORE_RESET)
        if problems:
            self.add(R4.STEP_BEFORE_RESET,
                     f"`step({_fmt(action)})` before `reset` must answer an observation (or a "
                     f"clean error); {'; '.join(problems)}. Most likely `step` uses state "
                     "that only `reset` creates.", action=action)

    def _invalid_actions(self) -> None:
        assert self.action_schema is not None
        cases = fuzz.invalid_actions(self.action_schema, self.action(0))
        if not cases:
            return
        problems: list[str] = []
        s = self.open()
        try:
            try:
                self.reset(s, self.seeds[0])
            except EnvErrorFrame:
                return
            for label, bad in cases:
                try:
                    answer = self.call("an invalid `step`", s.request,
                                       {"type": "step", "data": bad})
                except WireError as exc:
                    problems.append(f"{label}: over /ws the session closed ({exc.message})")
                    s.close()
                    s = self.open()
                    self.reset(s, self.seeds[0])
                    continue
                data = answer.get("data") or {}
                if answer.get("type") == "observation":
                    problems.append(f"{label}: over /ws it was accepted as an action")
                elif answer.get("type") == "error" and data.get("code") != "VALIDATION_ERROR":
                    problems.append(f"{label}: over /ws it reached the environment "
                                    f"({data.get('code')}: {str(data.get('message'))[:120]!r})")
                try:
                    self.call("`state` after an invalid action", s.state)
                except (EnvErrorFrame, WireError) as exc:
                    problems.append(f"{label}: the session is unusable afterwards ({exc})")
                    s.close()
                    s = self.open()
                    self.reset(s, self.seeds[0])
        finally:
            s.close()
        for label, bad in cases:
            status, _ = self._http_post("/step", {"action": bad})
            if status is not None and status != 422:
                problems.append(f"{label}: `POST /step` answered {status}, not 422")
        self.ran(R4.INVALID_ACTION_ACCEPTED)
        if problems:
            self.add(R4.INVALID_ACTION_ACCEPTED,
                     "Actions that break the action schema must be rejected with "
                     "VALIDATION_ERROR (WS) / 422 (HTTP) and leave the session usable; "
                     + "; ".join(problems[:4])
                     + (f" (+{len(problems) - 4} more)" if len(problems) > 4 else "")
                     + ". Most likely the Action model coerces or accepts anything.",
                     problems=problems)

    def _malformed_frames(self) -> None:
        frames = [("a frame that is not JSON", "envkit: this is not JSON {"),
                  ("a frame of unknown type", json.dumps({"type": "envkit-unknown"})),
                  ("a frame without `type`", json.dumps({"data": {}}))]
        problems: list[str] = []
        s = self.open()
        try:
            for label, text in frames:
                try:
                    self.call("an answer to a malformed frame", s.send_raw, text)
                    answer = self.call("an answer to a malformed frame", s.recv)
                    if answer.get("type") != "error":
                        problems.append(f"{label} got a {answer.get('type')!r} frame, not an "
                                        "error")
                    self.call("`state` after a malformed frame", s.state)
                except (EnvErrorFrame, WireError) as exc:
                    problems.append(f"{label} closed or broke the session ({exc})")
                    s.close()
                    self._check_alive()
                    s = self.open()
        finally:
            s.close()
        self.ran(R4.MALFORMED_FRAME_CRASH)
        if problems:
            self.add(R4.MALFORMED_FRAME_CRASH,
                     "A malformed frame must get an `error` frame (INVALID_JSON / UNKNOWN_TYPE) "
                     "and leave the session open; " + "; ".join(problems) + ".")

    # -- 4. fuzzing ------------------------------------------------------------------------
    def _fuzz(self) -> None:
        raised: list[tuple[int | None, dict[str, Any], str]] = []
        overlong: list[int | None] = []
        after_done_checked = False
        idx = 0
        s = self.open()
        try:
            for ep in range(self.episodes):
                seed = self.seeds[ep % len(self.seeds)]
                eid = f"envkit-{uuid.uuid4().hex[:12]}"
                self.progress(f"fuzzed episode {ep + 1}/{self.episodes} (seed {seed})")
                try:
                    self.reset(s, seed, episode_id=eid)
                except EnvErrorFrame as exc:
                    self._reset_failed(exc)
                    return
                done = False
                taken = 0
                for _ in range(self.max_steps):
                    action = self.action(idx)
                    idx += 1
                    try:
                        res = self.step(s, action)
                    except EnvErrorFrame as exc:
                        if exc.code == "EXECUTION_ERROR":
                            raised.append((seed, action, str(exc.data.get("message", ""))))
                        continue
                    taken += 1
                    if res.done:
                        done = True
                        break
                if ep == 0 and not raised:
                    state = self.call("`state`", s.state)
                    self._check_state(state, None, taken, f"after {taken} steps")
                if not done and taken >= self.max_steps:
                    overlong.append(seed)
                elif not after_done_checked:
                    after_done_checked = True
                    self._step_after_done(s, self.action(idx))
        finally:
            s.close()
        self.ran(R4.ACTION_RAISES, R4.EPISODE_NEVER_ENDS)
        if overlong:
            bound = (f"`validation.max_steps` ({self.max_steps})" if self.spec.max_steps
                     else f"{self.max_steps} steps (`validation.max_steps` is not declared)")
            self.add(R4.EPISODE_NEVER_ENDS,
                     f"Every episode must end (`done=true`) within {bound}; "
                     f"{len(overlong)} of {self.episodes} fuzzed episodes did not (seeds "
                     f"{sorted(set(s for s in overlong if s is not None))}). Most likely "
                     "`step` never sets `done=True`.", seeds=overlong)
        if raised:
            self._report_raise(raised)

    def _step_after_done(self, s: EnvSession, action: dict[str, Any]) -> None:
        self.ran(R4.STEP_AFTER_DONE)
        try:
            res = self.call("`step` after `done`", s.step, action)
        except EnvErrorFrame:
            return
        self.latencies.append(res.latency_s)
        if not res.done:
            self.add(R4.STEP_AFTER_DONE,
                     f"A `step` after `done=true` must keep `done=true` (or answer an error); "
                     f"got `done=false` with reward {res.reward!r}. Most likely `step` does "
                     "not check whether the episode is over.")

    def _report_raise(self, raised: list[tuple[int | None, dict[str, Any], str]]) -> None:
        seed, action, message = raised[0]
        assert self.action_schema is not None
        required = set(fuzz.action_schema(self.action_schema).get("required") or [])
        self.progress("shrinking the action that raised")
        minimal = action
        s = self.open()
        try:
            def still_fails(candidate: dict[str, Any]) -> bool:
                try:
                    self.reset(s, seed)
                    self.call("`step`", s.step, candidate)
                except EnvErrorFrame as exc:
                    return exc.code == "EXECUTION_ERROR"
                return False

            if still_fails(action):
                minimal = fuzz.shrink(action, still_fails, required=required)
                message = self._error_of(s, seed, minimal) or message
        finally:
            s.close()
        self.add(R4.ACTION_RAISES,
                 f"Every action the schema allows must give an observation; "
                 f"`step({fuzz.short_json(minimal)})` after `reset(seed={seed})` raised "
                 f"{message[:200]!r} ({len(raised)} fuzzed step(s) raised).",
                 action=minimal, original_action=action, error=message, seed=seed)

    def _error_of(self, s: EnvSession, seed: int | None, action: dict[str, Any]) -> str | None:
        try:
            self.reset(s, seed)
            self.call("`step`", s.step, action)
        except EnvErrorFrame as exc:
            return str(exc.data.get("message", ""))
        return None

    # -- 5. determinism --------------------------------------------------------------------
    def _play_episode(self, s: EnvSession, seed: int | None,
                      policy: Callable[[dict[str, Any], int], dict[str, Any]],
                      episode_id: str | None = None) -> _Episode:
        first = self.reset(s, seed, episode_id)
        ep = _Episode(seed, first.observation)
        obs = first.observation
        for i in range(self.max_steps):
            try:
                res = self.step(s, policy(obs, i))
            except EnvErrorFrame as exc:
                if exc.code == "EXECUTION_ERROR":
                    continue
                raise
            ep.steps.append(res)
            obs = res.observation
            if res.done:
                ep.done = True
                break
        return ep

    def _determinism(self) -> None:
        def replay(_obs: dict[str, Any], i: int) -> dict[str, Any]:
            return self.action(i)

        runs: dict[int, tuple[_Episode, _Episode]] = {}
        for seed in self.seeds:
            pair = []
            for _ in range(2):
                s = self.open()
                try:
                    pair.append(self._play_episode(s, seed, replay))
                except EnvErrorFrame as exc:
                    if exc.code == "CAPACITY_REACHED":
                        raise
                    return
                finally:
                    s.close()
            runs[seed] = (pair[0], pair[1])
        self.ran(R4.RESET_NONDETERMINISTIC, R4.REWARD_NONDETERMINISTIC)
        self.deterministic = True
        self.reference = {seed: a for seed, (a, _b) in runs.items()}
        for seed, (a, b) in runs.items():
            diff = fuzz.first_difference(a.reset_obs, b.reset_obs)
            if diff and not self.has(R4.RESET_NONDETERMINISTIC):
                self.deterministic = False
                path, va, vb = diff
                self.add(R4.RESET_NONDETERMINISTIC,
                         f"`reset(seed={seed})` must return the same observation twice; got "
                         f"two different `{path}` values ({_fmt(va)}, {_fmt(vb)}). Most likely "
                         "`reset()` draws from an unseeded random generator.",
                         seed=seed, field=path, first=va, second=vb)
            diff = fuzz.first_difference(a.rewards, b.rewards)
            if diff and not self.has(R4.REWARD_NONDETERMINISTIC):
                self.deterministic = False
                path, va, vb = diff
                self.add(R4.REWARD_NONDETERMINISTIC,
                         f"The same seed ({seed}) and the same actions must give the same "
                         f"rewards; step rewards differ at `rewards{path}` ({_fmt(va)}, "
                         f"{_fmt(vb)}). Most likely the reward uses an unseeded random "
                         "generator or outside state.", seed=seed, field=path, first=va,
                         second=vb)
        if self.deterministic and len(runs) >= 2:
            self.ran(R4.SEED_IGNORED)
            episodes = [a for a, _ in runs.values()]
            same = all(fuzz.first_difference(episodes[0].reset_obs, e.reset_obs) is None
                       and fuzz.first_difference(
                           [(x.reward, x.observation) for x in episodes[0].steps],
                           [(x.reward, x.observation) for x in e.steps]) is None
                       for e in episodes[1:])
            if same:
                self.add(R4.SEED_IGNORED,
                         f"Different seeds ({', '.join(map(str, runs))}) must give different "
                         "episodes; every reset observation and every reward was identical. "
                         "Most likely `reset()` ignores `seed` (openenv-core silently drops "
                         "arguments `reset` does not declare).", seeds=list(runs))

    # -- 6. oracle and degenerate policies ---------------------------------------------------
    def _oracle(self) -> None:
        spec = self.spec.oracle
        self.ran(R5.ORACLE_BELOW_MAX, R5.NO_ORACLE)
        if not spec:
            self.add(R5.NO_ORACLE,
                     "An oracle should be declared (`validation.oracle`) so the maximum "
                     f"reward ({self.hi:g}) is shown reachable; none is"
                     + (" (validating a URL without the environment's manifest)."
                        if self.target.manifest is None else "."))
            return
        root = self.target.root
        if root is None:
            self.checks_run.remove(R5.ORACLE_BELOW_MAX.code)
            self.checks_run.remove(R5.NO_ORACLE.code)
            self.progress("oracle: skipped (no environment directory to run it from)")
            return
        from envkit.policy import PolicyError, PolicyProcess
        from envkit.project import resolve_python

        python = getattr(self, "python", None) or resolve_python(root, self.target.python)
        self.progress(f"oracle `{spec}`")
        bests: list[tuple[int | None, float | None]] = []
        try:
            with PolicyProcess(spec, root, python, timeout_s=max(self.reply_s, 10.0)) as oracle:
                for seed in self.seeds:
                    s = self.open()
                    try:
                        ep = self._play_episode(s, seed, lambda obs, _i: oracle(obs))
                    finally:
                        s.close()
                    bests.append((seed, ep.best()))
        except PolicyError as exc:
            self.add(R5.ORACLE_BELOW_MAX, f"The oracle `{spec}` must play every seed; it "
                     f"failed: {exc.message}", error=exc.message)
            return
        below = [(s, b) for s, b in bests if b is None or b < self.hi - _EPS]
        scores = [b for _, b in bests if b is not None]
        self.oracle_best = sum(scores) / len(scores) if scores else None
        if below:
            self.oracle_best = None  # a broken oracle is no yardstick for the floor check
            seed, best = below[0]
            self.add(R5.ORACLE_BELOW_MAX,
                     f"The oracle `{spec}` must reach the maximum reward {self.hi:g} in every "
                     f"episode; with seed {seed} its best step reward was "
                     f"{'none' if best is None else f'{best:g}'} ({len(below)} of {len(bests)} "
                     "episodes below). Most likely the reward or the oracle is wrong.",
                     seed=seed, best=best)

    def _degenerate(self) -> None:
        assert self.action_schema is not None
        policies = fuzz.degenerate_actions(self.action_schema, self.actions[0])
        floor = None
        if self.oracle_best is not None:
            floor = self.oracle_best - self.spec.floor_margin
        hacks: list[str] = []
        for name, action in policies.items():
            self.progress(f"degenerate policy `{name}`")
            bests: list[float] = []
            reached: int | None = None
            for seed in self.seeds:
                s = self.open()
                try:
                    ep = self._play_episode(s, seed, lambda _o, _i, a=action: dict(a))
                except EnvErrorFrame as exc:
                    if exc.code == "CAPACITY_REACHED":
                        raise
                    ep = None
                finally:
                    s.close()
                if ep is None or not ep.steps:
                    break
                best = ep.best()
                if best is None:
                    continue
                bests.append(best)
                if best >= self.hi - _EPS and reached is None:
                    reached = seed
                if (not ep.done and len(ep.steps) >= self.max_steps and self.spec.max_steps
                        and not self.has(R4.EPISODE_NEVER_ENDS)):
                    self.add(R4.EPISODE_NEVER_ENDS,
                             f"Every episode must end within `validation.max_steps` "
                             f"({self.max_steps}); the degenerate policy `{name}` "
                             f"({fuzz.short_json(action)}) played {self.max_steps} steps with "
                             f"seed {seed} without `done=true`.")
            if not bests:
                continue
            mean = sum(bests) / len(bests)
            if reached is not None:
                hacks.append(f"`{name}` ({fuzz.short_json(action)}) reached the maximum "
                             f"{self.hi:g} (best step reward {max(bests):g}, seed {reached})")
            elif floor is not None and mean >= floor - _EPS:
                hacks.append(f"`{name}` ({fuzz.short_json(action)}) scored {mean:g}, within "
                             f"`floor_margin` {self.spec.floor_margin:g} of the oracle's "
                             f"{self.oracle_best:g}")
        self.ran(R5.REWARD_HACKABLE)
        if hacks:
            self.add(R5.REWARD_HACKABLE,
                     "Degenerate policies must score clearly below the maximum reward; "
                     + "; ".join(hacks) + ". Most likely the reward rewards a proxy (length, "
                     "presence) rather than the task.", policies=hacks)

    # -- 7. sessions -----------------------------------------------------------------------
    def _concurrency(self) -> None:
        if not self.deterministic or len(self.seeds) < 1:
            return
        seeds = (self.seeds + self.seeds)[:2]
        try:
            a = self.open(retry_s=1.0)
        except EnvErrorFrame:
            return
        try:
            try:
                b = self.open(retry_s=0.0)
            except EnvErrorFrame:
                self.capacity = 1
                return
            try:
                self.progress("two sessions interleaved")
                ref = self.reference
                eps = []
                for s, seed in ((a, seeds[0]), (b, seeds[1])):
                    first = self.reset(s, seed)
                    eps.append(_Episode(seed, first.observation))
                live = [0, 1]
                for i in range(self.max_steps):
                    for k in list(live):
                        s = (a, b)[k]
                        try:
                            res = self.step(s, self.action(i))
                        except EnvErrorFrame:
                            continue
                        eps[k].steps.append(res)
                        if res.done:
                            live.remove(k)
                    if not live:
                        break
            finally:
                b.close()
        finally:
            a.close()
        self.ran(R4.SESSIONS_INTERFERE)
        for ep in eps:
            want = ref[ep.seed]
            diff = fuzz.first_difference(
                {"reset": want.reset_obs,
                 "steps": [{"reward": x.reward, "observation": x.observation} for x in want.steps]},
                {"reset": ep.reset_obs,
                 "steps": [{"reward": x.reward, "observation": x.observation} for x in ep.steps]})
            if diff:
                path, va, vb = diff
                self.add(R4.SESSIONS_INTERFERE,
                         f"Two sessions played at the same time must each see the episode they "
                         f"would see alone; with seeds {seeds[0]} and {seeds[1]} interleaved, "
                         f"`{path}` was {_fmt(vb)} instead of {_fmt(va)} (seed {ep.seed}). Most "
                         "likely episode state lives in a module-level or class-level variable.",
                         field=path, alone=va, interleaved=vb)
                return

    def _capacity(self) -> None:
        self.progress("capacity")
        time.sleep(0.05)
        sessions: list[EnvSession] = []
        refused: str | None = None
        accepted = 0
        try:
            for _ in range(CAPACITY_PROBE_LIMIT + 1):
                self._check_budget()
                try:
                    s = EnvSession(self.url, timeout_s=self.reply_s)
                except WireError as exc:
                    self._check_alive()
                    refused = f"the connection was refused ({exc.message})"
                    break
                sessions.append(s)
                try:
                    answer = _probe(s)
                except WireError as exc:
                    self._check_alive()
                    refused = f"the session closed without an error frame ({exc.message})"
                    break
                data = answer.get("data") or {}
                if answer.get("type") == "error" and data.get("code") == "CAPACITY_REACHED":
                    refused = ""
                    break
                if answer.get("type") == "error" and data.get("code") not in (
                        "EXECUTION_ERROR",):
                    refused = f"it answered {data.get('code')} instead of CAPACITY_REACHED"
                    break
                accepted += 1
        finally:
            for s in sessions:
                s.close()
        self.ran(R4.CAPACITY_NOT_ENFORCED)
        self.capacity = accepted
        if refused is None:
            self.add(R4.CAPACITY_NOT_ENFORCED,
                     f"The server must refuse sessions beyond its capacity with "
                     f"CAPACITY_REACHED; it accepted {accepted} concurrent sessions (probe "
                     "limit). Most likely sessions are not limited at all.",
                     accepted=accepted)
        elif refused:
            self.add(R4.CAPACITY_NOT_ENFORCED,
                     f"A session beyond capacity ({accepted} open) must be refused with a "
                     f"CAPACITY_REACHED error frame; {refused}.", accepted=accepted)

    # -- 8. verdicts -----------------------------------------------------------------------
    def _verdicts(self) -> None:
        if not self.step_rewards and not self.latencies:
            return
        lo, hi = self.lo, self.hi
        self.ran(R5.REWARD_NOT_FINITE, R5.REWARD_NOT_NUMERIC, R5.REWARD_OUT_OF_RANGE,
                 R4.OBSERVATION_SCHEMA_MISMATCH)
        total = len(self.step_rewards)
        texts = {
            R5.REWARD_NOT_FINITE.code: (R5.REWARD_NOT_FINITE,
                                        "Every step reward must be a finite number; {n} of "
                                        "{total} step rewards were `null` (NaN or ±inf on "
                                        "the server, or no reward set), first: {first}. Most "
                                        "likely a division by zero or a missing `reward=`."),
            R5.REWARD_NOT_NUMERIC.code: (R5.REWARD_NOT_NUMERIC,
                                         "Every step reward must be a number; {n} of {total} "
                                         "were not, first: {first}."),
            R5.REWARD_OUT_OF_RANGE.code: (R5.REWARD_OUT_OF_RANGE,
                                          f"Every step reward must lie in `reward_range` "
                                          f"[{lo:g}, {hi:g}]; {{n}} of {{total}} did not, "
                                          "first: {first}. Most likely the reward is not "
                                          "normalised."),
        }
        for code, (count, first) in self.reward_issues.items():
            rule, text = texts[code]
            self.add(rule, text.format(n=count, total=total, first=first))
        if self.obs_issue:
            count, first = self.obs_issue
            self.add(R4.OBSERVATION_SCHEMA_MISMATCH,
                     f"Observations must conform to the /schema observation schema; {count} did "
                     f"not, first: {first}.")
        numbers = [float(r) for r in self.step_rewards if _is_number(r)]
        if len(numbers) >= 5:
            self.ran(R5.REWARD_CONSTANT)
            if max(numbers) - min(numbers) <= _EPS and not self.reward_issues:
                self.add(R5.REWARD_CONSTANT,
                         f"Rewards should vary with the actions; all {len(numbers)} step "
                         f"rewards envkit saw were {numbers[0]:g}. Most likely the reward is "
                         "not computed from the action (an unset rubric gives 0.0).")
        if len(self.latencies) >= 5:
            self.ran(R4.STEP_LATENCY)
            lat = sorted(self.latencies)
            p95 = lat[min(len(lat) - 1, math.ceil(0.95 * len(lat)) - 1)]
            if p95 > self.spec.step_timeout_s:
                self.add(R4.STEP_LATENCY,
                         f"The p95 step latency must stay within `step_timeout_s` "
                         f"({self.spec.step_timeout_s:g} s); it was {p95:.3f} s over "
                         f"{len(lat)} steps.", p95_s=p95)
