"""EK4xx protocol: WebSocket frames and ``POST /step`` follow the OpenEnv contract.

A reset/state/step/state round trip, ``state`` fields, ``step`` before ``reset``, actions that
break the schema, malformed frames, and every observation against the /schema observation
(``reset``'s against 0.10's ``reset_observation`` when given). Source: the ``/ws`` handler
of openenv-core 0.3.0 and ``openenv`` 0.10 (0.10 keeps ``metadata`` in observations and adds a top-level ``metadata`` to replies, both
accepted; a production-mode server has no HTTP ``/step``).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from envkit.errors import WireError
from envkit.findings import Severity, register
from envkit.validation import fuzz
from envkit.validation.engine import ActionPool, ServerPlayer
from envkit.validation.rules import routes
from envkit.wire import EnvErrorFrame

ROUND_TRIP_FAILED = register(
    "EK405",
    "session-round-trip-failed",
    Severity.ERROR,
    rfc008="runtime.state_contract",
    summary="A WebSocket reset/step/state/close round trip does not follow the protocol.",
    what="envkit opens `/ws`, sends `reset`, `state`, `step`, `state`, `close` and checks each "
    "answer is the frame the protocol defines (`observation` with `observation`, `reward`, "
    "`done`; `state` with `episode_id`, `step_count`).",
    why="`/ws` is the only stateful path: every trainer (TRL, envkit eval) plays episodes "
    "through it.",
    example="The session closes after `reset`; `state` answers a non-object; frames too large "
    "(over 16 MiB) for a client.",
    fix="Serve the environment with OpenEnv's `create_app` and return Observation "
    "objects from `reset` and `step`.",
)

OBSERVATION_SCHEMA_MISMATCH = register(
    "EK406",
    "observation-schema-mismatch",
    Severity.ERROR,
    rfc008="runtime.observation_schema",
    summary="An observation sent on the wire does not conform to the /schema observation.",
    what="Every observation envkit receives is validated against the observation JSON Schema "
    "from /schema; `reset`'s against `reset_observation` when /schema gives it (OpenEnv "
    "0.10), else against `observation`. `reward` and `done` travel outside the "
    "observation; `metadata` may be inside it (0.10) or not (0.3.0).",
    why="Clients parse observations with your schema; a field of the wrong type breaks "
    "them at training time, not at development time.",
    example='`Observation.model_construct(count="3")` sends a string for an integer field.',
    fix="Build observations with the constructor (validated), never `model_construct`, and "
    "keep the fields' types honest.",
)

STEP_BEFORE_RESET = register(
    "EK407",
    "step-before-reset-crash",
    Severity.ERROR,
    summary="`step` before `reset` raises inside the environment.",
    what="envkit sends a valid action on a fresh WebSocket session, before any `reset`, and "
    "`POST /step` (which never resets: a fresh instance per request; skipped when the "
    "server does not serve it, e.g. in production mode).",
    why="Clients reconnect and step, HTTP /step never resets, and a raise there shows up as "
    "EXECUTION_ERROR frames or HTTP 500s in training logs.",
    example="`step` reads `self._target`, which only `reset` sets: AttributeError.",
    fix="Initialise all episode state in `__init__`, and answer a step before reset with an "
    "observation (done=true, a hint in a field) instead of raising.",
)

INVALID_ACTION_ACCEPTED = register(
    "EK408",
    "invalid-action-not-rejected",
    Severity.ERROR,
    summary="Invalid actions (wrong types, missing or extra fields) are not rejected cleanly.",
    what="envkit sends actions that break the action schema: a required field missing, a "
    "field of the wrong type, an unknown extra field (when the schema forbids extras). "
    "Over /ws each must give a VALIDATION_ERROR frame and leave the session usable; over "
    "`POST /step` (when served: production mode has none) each must give HTTP 422.",
    why="An agent's malformed tool call must come back as a validation error it can learn "
    "from, not as a silently coerced action, a crash, or a dead session.",
    example='A `field_validator(mode="before")` that turns anything into a string accepts '
    '`{"message": [1, 2]}`.',
    fix='Keep the Action model strict (`extra="forbid"`, no coercing validators).',
)

MALFORMED_FRAME_CRASH = register(
    "EK409",
    "malformed-frame-crash",
    Severity.ERROR,
    summary="A malformed WebSocket frame (not JSON, unknown type) closes or crashes the session.",
    what="On a session it has reset, envkit sends a frame that is not JSON, one with an "
    "unknown `type` and one without `type`; each must give an `error` frame "
    "(INVALID_JSON / UNKNOWN_TYPE) and leave the "
    "session and the server running.",
    why="One bad frame from a client must not kill an episode or the server other sessions share.",
    example="A custom WebSocket handler that calls `json.loads` without a try and closes "
    "the socket.",
    fix="Use OpenEnv's `/ws` handler, or answer bad frames with an error frame and keep reading.",
)

STEP_COUNT_WRONG = register(
    "EK415",
    "step-count-wrong",
    Severity.ERROR,
    rfc008="runtime.state_contract",
    summary="`state.step_count` is not 0 after `reset` or does not count steps.",
    what="envkit reads `state` after `reset` (must be 0), after one, two and three steps (the "
    "third repeats the first action; must equal the number of steps taken in the episode), "
    "and after the session's second `reset` (must be 0 again); and, when the server accepts "
    "two sessions, at the end of EK419's interleaved episodes (must equal the count of the "
    "same episode played alone: one `State` shared by every session counts the other "
    "session's steps). With EK416 this is RFC 008's `runtime.state_contract`, which "
    "`openenv validate --level runtime` 0.10 checks.",
    why="Trainers and dashboards read `step_count` for episode lengths and step budgets.",
    example="`step` forgets `self._state.step_count += 1`.",
    fix="Reset `step_count` to 0 in `reset` and add 1 in every `step`.",
)

EPISODE_ID_IGNORED = register(
    "EK416",
    "episode-id-ignored",
    Severity.ERROR,
    rfc008="runtime.state_contract",
    summary="`reset(episode_id=...)` is not reflected in `state.episode_id`.",
    what='envkit resets with `episode_id="envkit-<random>"` and reads `state.episode_id` '
    "after `reset` and after each step of the episode, then resets the same session with "
    "a new id: it must equal the id sent each time. With "
    "EK415 this is RFC 008's `runtime.state_contract`, which `openenv validate --level "
    "runtime` 0.10 checks.",
    why="Trainers pass episode ids to join rollouts with logs; an ignored id breaks "
    "that join silently.",
    example="`reset()` always sets `State(episode_id=str(uuid4()))`.",
    fix="Use `State(episode_id=episode_id or str(uuid4()), step_count=0)` in `reset`.",
)

HEALTH_WHILE_RESET_FAILS = register(
    "EK418",
    "health-while-reset-fails",
    Severity.ERROR,
    rfc008="runtime.startup",
    summary="GET /health answers 200 while `reset` fails.",
    what="When `reset` answers an error frame, envkit checks /health again: it still says healthy.",
    why="Orchestrators trust /health alone; a server that is healthy but cannot reset "
    "takes traffic and fails every episode.",
    example="`reset` needs a data file that is missing from the Docker image.",
    fix="Fix the error `reset` raised (shown in the message); load what `reset` needs at "
    "start-up so a broken server fails its start instead.",
)


def _fmt(value: Any) -> str:
    return fuzz.short_json(value, 80)


def round_trip(engine: ServerPlayer, actions: ActionPool, production: bool = False) -> bool:
    """EK405, EK415, EK416 (and EK418 when ``reset`` fails): reset (seed, episode_id) ->
    state -> step -> state -> step -> state -> the first action again -> state -> reset
    (no seed, a new episode_id) -> state -> close (RFC 008's ``runtime.state_contract``).
    ``False`` when ``reset`` fails (nothing else can be played); in ``production`` mode that
    is reported as "episode checks not applicable" (EK426), not as a defect."""
    eid = f"envkit-{uuid.uuid4().hex[:12]}"
    s = engine.open()
    try:
        try:
            first = engine.reset(s, engine.settings.seeds[0], episode_id=eid)
        except EnvErrorFrame as exc:
            if production:
                routes.episodes_not_applicable(engine, exc)
            else:
                reset_failed(engine, exc, engine.settings.seeds[0])
            return False
        engine.ran(
            ROUND_TRIP_FAILED, EPISODE_ID_IGNORED, STEP_COUNT_WRONG, HEALTH_WHILE_RESET_FAILS
        )
        if not isinstance(first.raw.get("observation"), dict) or "done" not in first.raw:
            engine.add(
                ROUND_TRIP_FAILED,
                "`reset` must answer an `observation` frame with "
                f"`observation`, `reward` and `done`; got {_fmt(first.raw)}.",
            )
        state = engine.call("`state`", s.state)
        check_state(engine, state, eid, 0, "after `reset`")
        if actions:
            # the third step repeats the first action: a repeat that returns early ("already
            # guessed") must still count as a step
            try:
                for n, i in ((1, 0), (2, 1), (3, 0)):
                    res = engine.step(s, actions.at(i))
                    state = engine.call("`state`", s.state)
                    check_state(engine, state, eid, n, f"after {n} step{'s' if n > 1 else ''}")
                    if res.done:
                        break  # what follows `done` is EK417's business
            except EnvErrorFrame:
                pass  # an action raising is EK410's business (episodes)
        # the session's next episode, as TRL resets the same environment for each rollout,
        # and as OpenEnv's client calls it: no seed
        again = f"envkit-{uuid.uuid4().hex[:12]}"
        try:
            engine.reset(s, None, episode_id=again)
        except EnvErrorFrame:
            pass  # recorded; judged by reset_failures()
        else:
            state = engine.call("`state`", s.state)
            check_state(engine, state, again, 0, "after the session's second `reset`")
    finally:
        s.close()
    return True


def check_state(
    engine: ServerPlayer, state: dict[str, Any], eid: str | None, steps: int | None, when: str
) -> None:
    """EK405 (not an object with ``step_count``), EK416 (``episode_id`` is not ``eid``),
    EK415 (``step_count`` is not ``steps``); ``None`` skips a comparison."""
    if not isinstance(state, dict) or "step_count" not in state:
        if not engine.has(ROUND_TRIP_FAILED):
            engine.add(
                ROUND_TRIP_FAILED,
                f"`state` must answer an object with `episode_id` "
                f"and `step_count`; got {_fmt(state)} {when}.",
            )
        return
    if eid is not None and state.get("episode_id") != eid and not engine.has(EPISODE_ID_IGNORED):
        engine.add(
            EPISODE_ID_IGNORED,
            f'`reset(episode_id="{eid}")` must set `state.episode_id` to it; got '
            f"{_fmt(state.get('episode_id'))}. Most likely `reset()` ignores "
            "`episode_id`.",
        )
    if steps is not None and state.get("step_count") != steps and not engine.has(STEP_COUNT_WRONG):
        engine.add(
            STEP_COUNT_WRONG,
            f"`state.step_count` must be {steps} {when}; got "
            f"{_fmt(state.get('step_count'))}. Most likely `step_count` is not reset "
            "in `reset` or not incremented in `step`.",
        )


def _reset_call(seed: int | None) -> str:
    return "`reset()` without a seed" if seed is None else f"`reset(seed={seed})`"


def reset_failed(engine: ServerPlayer, exc: EnvErrorFrame, seed: int | None) -> None:
    """``reset`` (with ``seed``) answered an error frame: EK418 when /health still says
    healthy, else EK405."""
    failure = engine.reset_failure(exc)
    status = failure.health if failure is not None else engine.get("/health")[0]
    engine.ran(HEALTH_WHILE_RESET_FAILS)
    message = str(exc.data.get("message", ""))[:300]
    if status == 200:
        engine.add(
            HEALTH_WHILE_RESET_FAILS,
            f"{_reset_call(seed)} must succeed when GET /health says healthy; /health "
            f"answered 200 but `reset` answered {exc.code}: {message!r}. Health must not be "
            "trusted alone."
            + (" OpenEnv's client and TRL reset without a seed." if seed is None else ""),
            error=message,
            seed=seed,
        )
    else:
        engine.add(
            ROUND_TRIP_FAILED,
            f"`reset` must answer an observation; it answered {exc.code}: {message!r}.",
        )
        engine.ran(ROUND_TRIP_FAILED)


def reset_failures(engine: ServerPlayer) -> None:
    """EK418 (or EK405) for the first ``reset`` that failed during any check, unless one was
    reported already: a reset that fails only for some seeds, only without a seed, or only on
    a session's second reset."""
    if not engine.reset_failures or engine.has(HEALTH_WHILE_RESET_FAILS):
        return
    if engine.has(routes.PRODUCTION_MODE):  # episodes do not apply there: not a failure
        return
    first = engine.reset_failures[0]
    if engine.has(ROUND_TRIP_FAILED) and first.health != 200:
        return
    reset_failed(engine, first.error, first.seed)


def lost_sessions(engine: ServerPlayer) -> None:
    """EK405 for the first check a failing session ended (:meth:`ServerPlayer.guard`)."""
    if not engine.lost_sessions:
        return
    engine.ran(ROUND_TRIP_FAILED)
    if not engine.has(ROUND_TRIP_FAILED):
        check, cause = engine.lost_sessions[0]
        engine.add(
            ROUND_TRIP_FAILED,
            f"Sessions must stay usable; during {check} the session failed: {cause}",
            check=check,
        )


def step_before_reset(engine: ServerPlayer, actions: ActionPool) -> None:
    """EK407: a valid action on a fresh session (WS) and on ``POST /step``."""
    action = actions.at(0)
    problems: list[str] = []
    s = engine.open()
    try:
        try:
            engine.call("`step` before `reset`", s.step, action)
        except EnvErrorFrame as exc:
            if exc.code == "EXECUTION_ERROR":
                problems.append(f"over /ws it raised: {str(exc.data.get('message', ''))[:200]!r}")
        except WireError as exc:
            problems.append(f"over /ws the session closed: {exc.message}")
    finally:
        s.close()
    status, _text = engine.post("/step", {"action": action})
    if status is not None and status >= 500:  # 404/405: not served (production mode)
        problems.append(f"`POST /step` (a fresh, never reset instance) answered {status}")
    engine.ran(STEP_BEFORE_RESET)
    if problems:
        engine.add(
            STEP_BEFORE_RESET,
            f"`step({_fmt(action)})` before `reset` must answer an observation (or a "
            f"clean error); {'; '.join(problems)}. Most likely `step` uses state "
            "that only `reset` creates.",
            action=action,
        )


def invalid_actions(engine: ServerPlayer, schema: dict[str, Any], actions: ActionPool) -> None:
    """EK408: actions breaking ``schema`` get VALIDATION_ERROR (WS) and 422 (HTTP)."""
    cases = fuzz.invalid_actions(schema, actions.at(0))
    if not cases:
        return
    seed = engine.settings.seeds[0]
    problems: list[str] = []
    s = engine.open()
    try:
        try:
            engine.reset(s, seed)
        except EnvErrorFrame:
            return
        for label, bad in cases:
            try:
                answer = engine.call("an invalid `step`", s.request, {"type": "step", "data": bad})
            except WireError as exc:
                problems.append(f"{label}: over /ws the session closed ({exc.message})")
                s.close()
                s = engine.open()
                engine.reset(s, seed)
                continue
            data = answer.get("data") or {}
            if answer.get("type") == "observation":
                problems.append(f"{label}: over /ws it was accepted as an action")
            elif answer.get("type") == "error" and data.get("code") != "VALIDATION_ERROR":
                problems.append(
                    f"{label}: over /ws it reached the environment "
                    f"({data.get('code')}: {str(data.get('message'))[:120]!r})"
                )
            try:
                engine.call("`state` after an invalid action", s.state)
            except (EnvErrorFrame, WireError) as exc:
                problems.append(f"{label}: the session is unusable afterwards ({exc})")
                s.close()
                s = engine.open()
                engine.reset(s, seed)
    finally:
        s.close()
    for label, bad in cases:
        status, _ = engine.post("/step", {"action": bad})
        if status in (404, 405):
            break  # HTTP /step not served (production mode: EK426)
        if status is not None and status != 422:
            problems.append(f"{label}: `POST /step` answered {status}, not 422")
    engine.ran(INVALID_ACTION_ACCEPTED)
    if problems:
        engine.add(
            INVALID_ACTION_ACCEPTED,
            "Actions that break the action schema must be rejected with "
            "VALIDATION_ERROR (WS) / 422 (HTTP) and leave the session usable; "
            + "; ".join(problems[:4])
            + (f" (+{len(problems) - 4} more)" if len(problems) > 4 else "")
            + ". Most likely the Action model coerces or accepts anything.",
            problems=problems,
        )


def _reset_session(engine: ServerPlayer) -> Any:
    """A new session, reset with the first seed when ``reset`` works (a failing ``reset``
    is the round trip's finding: the session is then used as it is)."""
    s = engine.open()
    try:
        engine.reset(s, engine.settings.seeds[0])
    except EnvErrorFrame:
        pass
    return s


def malformed_frames(engine: ServerPlayer) -> None:
    """EK409: a frame that is not JSON, one of unknown type, one without type.

    The frames are sent on a session that was reset, so the ``state`` that checks the session
    still works cannot fail for want of a ``reset``: an environment that answers ``step`` or
    ``state`` before ``reset`` with "Call reset() first" is EK407's finding, not this one
    (huggingface/OpenEnv's repl_env, docs/realworld.md)."""
    frames = [
        ("a frame that is not JSON", "envkit: this is not JSON {"),
        ("a frame of unknown type", json.dumps({"type": "envkit-unknown"})),
        ("a frame without `type`", json.dumps({"data": {}})),
    ]
    problems: list[str] = []
    s = _reset_session(engine)
    try:
        for label, text in frames:
            try:
                engine.call("an answer to a malformed frame", s.send_raw, text)
                answer = engine.call("an answer to a malformed frame", s.recv)
                if answer.get("type") != "error":
                    problems.append(f"{label} got a {answer.get('type')!r} frame, not an error")
                engine.call("`state` after a malformed frame", s.state)
            except (EnvErrorFrame, WireError) as exc:
                problems.append(f"{label} closed or broke the session ({exc})")
                s.close()
                engine.check_alive()
                s = _reset_session(engine)
    finally:
        s.close()
    engine.ran(MALFORMED_FRAME_CRASH)
    if problems:
        engine.add(
            MALFORMED_FRAME_CRASH,
            "A malformed frame must get an `error` frame (INVALID_JSON / UNKNOWN_TYPE) "
            "and leave the session open; " + "; ".join(problems) + ".",
        )


class ObservationWatch:
    """Validates every observation the engine sees against the /schema observation, and
    ``reset``'s against ``reset_observation`` when /schema has it (OpenEnv 0.10)
    (:meth:`ServerPlayer.watch_observations`); :func:`observations` reports EK406."""

    def __init__(self, validator: Any, reset_validator: Any = None):
        self.validator = validator
        self.reset_validator = reset_validator if reset_validator is not None else validator
        self.count = 0
        self.first = ""

    def __call__(self, obs: Any, where: str) -> None:
        validator = self.reset_validator if where == "reset" else self.validator
        if validator is None:
            return
        try:
            err = next(iter(validator.iter_errors(obs)), None)
        except Exception:  # noqa: BLE001 - a broken schema is EK403's business
            return
        if err is not None:
            path = ".".join(str(p) for p in err.absolute_path) or "(observation)"
            if not self.count:
                self.first = f"`{path}` after `{where}`: {err.message} (observation {_fmt(obs)})"
            self.count += 1


def observations(engine: ServerPlayer, watch: ObservationWatch) -> None:
    """EK406 once any step was answered."""
    if not engine.rewards and not engine.latencies:
        return
    engine.ran(OBSERVATION_SCHEMA_MISMATCH)
    if watch.count:
        engine.add(
            OBSERVATION_SCHEMA_MISMATCH,
            f"Observations must conform to the /schema observation schema "
            f"(`reset_observation` for `reset`'s when given); "
            f"{watch.count} did not, first: {watch.first}.",
        )
