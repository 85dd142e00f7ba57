"""EK4xx endpoints: ``GET /health``, ``/schema`` and ``/metadata`` answer as OpenEnv's do.

Source: wire facts of openenv-core 0.3.0 and
``openenv`` 0.10 (their ``create_app``). 0.10's ``/schema`` has a fourth key,
``reset_observation`` (the observation ``reset`` returns).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from envkit.findings import Severity, register
from envkit.validation import fuzz
from envkit.validation.engine import ServerPlayer
from envkit.validation.rules.liveness import unanswered
from envkit.wire import Health

HEALTH_BROKEN = register(
    "EK402",
    "health-endpoint-broken",
    Severity.ERROR,
    rfc008="runtime.startup",
    summary="GET /health does not answer 200 with a JSON object.",
    what='`GET /health` must answer HTTP 200 with `{"status": "healthy"}` (OpenEnv\'s answer).',
    why="Docker health checks, `envkit run` and Space orchestration poll /health; a wrong "
    "answer makes a working server look dead.",
    example="A custom middleware answering 503 or an HTML page on /health.",
    fix="Serve the app made by OpenEnv's `create_app`, or answer /health with "
    '`{"status": "healthy"}`.',
)

SCHEMA_INVALID = register(
    "EK403",
    "schema-endpoint-invalid",
    Severity.ERROR,
    rfc008="runtime.observation_schema",
    summary="GET /schema does not give valid JSON Schemas for action and observation.",
    what='`GET /schema` must answer `{"action": <JSON Schema>, "observation": <JSON Schema>, '
    '"state": ...}` (OpenEnv 0.10 adds `"reset_observation"`); each schema is checked '
    "against its JSON Schema meta-schema.",
    why="Clients, web UIs and envkit's own fuzzer generate actions from the action schema; "
    "an invalid schema means nobody can build a valid action without reading your code.",
    example='`{"action": {"type": "strin"}}` (a typo in a hand-written schema).',
    fix="Let openenv-core generate /schema from your pydantic Action and Observation classes.",
)

METADATA_BROKEN = register(
    "EK404",
    "metadata-endpoint-broken",
    Severity.ERROR,
    summary="GET /metadata does not answer 200 with a JSON object naming the environment.",
    what="`GET /metadata` must answer HTTP 200 with a JSON object holding at least `name`.",
    why="Hubs and catalogues read /metadata to describe the environment.",
    example="`get_metadata()` overridden and raising, giving HTTP 500.",
    fix="Return an `EnvironmentMetadata` from `get_metadata()` (or do not override it).",
)


@dataclass(frozen=True)
class Api:
    """What ``/schema`` gave the later checks.

    Attributes:
        action: the action JSON Schema, ``None`` when missing or invalid (no action can be
            generated: the checks that step are skipped).
        observation: a validator of observations (``reward``, ``done``, ``metadata`` not
            required: they travel outside the observation), ``None`` when missing or invalid.
        reset_observation: the same for the observation ``reset`` returns, from 0.10's
            ``reset_observation`` when /schema has it, else ``observation``.
    """

    action: dict[str, Any] | None
    observation: Any
    reset_observation: Any = None


def _shown(status: int | None, body: Any, text: str) -> str:
    return f"{status} {fuzz.short_json(body) if body is not None else repr(text)}"


def check(engine: ServerPlayer) -> Api | None:
    """EK402-EK404. ``None`` when ``/health`` gives no answer at all (reported: nothing else
    can be checked)."""
    engine.progress("checking /health, /schema, /metadata")
    status, body, text = engine.get("/health")
    engine.ran(HEALTH_BROKEN)
    if unanswered(engine, "GET /health"):
        engine.unran(HEALTH_BROKEN)
        return None
    if status is None:
        engine.add(
            HEALTH_BROKEN,
            f"GET {engine.url}/health must answer 200; {text}. Is the server running at this URL?",
        )
        return None
    if not Health(status, body, text).healthy:  # the one definition of healthy (envkit.wire)
        engine.add(
            HEALTH_BROKEN,
            f'GET /health must answer 200 with {{"status": '
            f'"healthy"}}; got {_shown(status, body, text)}.',
        )
    api = _schema(engine)
    status, body, text = engine.get("/metadata")
    if unanswered(engine, "GET /metadata"):
        return api
    engine.ran(METADATA_BROKEN)
    if status != 200 or not isinstance(body, dict) or not isinstance(body.get("name"), str):
        engine.add(
            METADATA_BROKEN,
            f"GET /metadata must answer 200 with a JSON object holding "
            f"`name`; got {_shown(status, body, text)}.",
        )
    return api


def _schema(engine: ServerPlayer) -> Api:
    # jsonschema takes ~250 ms to import: only a run that reaches /schema pays it. The
    # fuzzer's warm-up thread may be importing it right now: one importer at a time.
    with fuzz.IMPORT_LOCK:
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import validator_for

    status, body, text = engine.get("/schema")
    problems: list[str] = []
    timed_out = unanswered(engine, "GET /schema")
    if timed_out:
        body = {}  # no action can be generated: the checks that step are skipped
    else:
        engine.ran(SCHEMA_INVALID)
    if not timed_out and (status != 200 or not isinstance(body, dict)):
        problems.append(f"GET /schema answered {_shown(status, body, text)}")
        body = {}
    action: dict[str, Any] | None = None
    validators: dict[str, Any] = {}
    for key in ("action", "observation", "reset_observation"):
        sub = body.get(key)
        if key == "reset_observation" and sub is None:
            continue  # openenv-core 0.3.0: reset returns the observation type
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
            action = sub
        else:
            obs_schema = dict(sub)
            obs_schema["required"] = [
                r
                for r in obs_schema.get("required") or []
                if r not in ("reward", "done", "metadata")
            ]
            validators[key] = cls(obs_schema)
    if problems:
        engine.add(
            SCHEMA_INVALID,
            "GET /schema must give valid JSON Schemas for `action` and "
            "`observation` (and `reset_observation` when given); " + "; ".join(problems) + ".",
        )
    observation = validators.get("observation")
    return Api(action, observation, validators.get("reset_observation", observation))
