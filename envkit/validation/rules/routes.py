"""EK4xx routes: the server's mode (simulation or production) and OpenEnv 0.10's Task API.

Read from the route set ``GET /openapi.json`` lists, as ``openenv validate --url`` does
(``mode_endpoint_consistency``: ``/reset`` listed means simulation mode, which needs
``/step`` and ``/state`` too; none of the three means production mode). Source:
OpenEnv 0.10's ``create_app``: ``OPENENV_MODE=production`` drops HTTP ``/reset``,
``/step``, ``/state`` (``/ws`` stays; a harness environment adds ``WS /harness``, which
envkit does not open: connecting starts the agent harness). The Task API routes
(``/list_environments``, ``/{env_name}/splits|tasks|num_tasks|task|task_range``) answer 501
when the environment has no TaskProvider: that is not a defect.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from envkit.findings import Severity, register
from envkit.validation import fuzz
from envkit.validation.engine import ServerPlayer

EPISODE_ROUTES = ("/reset", "/step", "/state")

PRODUCTION_MODE = register(
    "EK426",
    "production-mode",
    Severity.INFO,
    summary="The server runs in production mode: HTTP episode routes are absent by design.",
    what="`GET /openapi.json` lists none of `/reset`, `/step`, `/state`: the server was "
    "started with `OPENENV_MODE=production`. envkit then validates what it exposes "
    "(/health, /schema, /metadata, /mcp, the Task API, and episodes over `/ws` when "
    "`/ws` `reset` works); the checks of HTTP `/step` are not applicable, and when "
    "`/ws` cannot reset either (a harness environment serves `WS /harness` instead) "
    "no episode check is.",
    why="A production server is not broken for lacking the simulation routes; the report "
    "must say which checks could not apply instead of failing them.",
    example="`OPENENV_MODE=production uvicorn server.app:app`.",
    fix="Nothing to fix. To validate episodes fully, run the server in simulation mode "
    "(the default: unset `OPENENV_MODE`).",
)

MODE_ROUTES_INCONSISTENT = register(
    "EK427",
    "mode-routes-inconsistent",
    Severity.ERROR,
    summary="The HTTP episode routes are half there: neither simulation nor production mode.",
    what="`GET /openapi.json` must list all of `/reset`, `/step`, `/state` (simulation mode) "
    "or none of them (production mode), as `openenv validate --url` checks "
    "(`mode_endpoint_consistency`).",
    why="Clients pick the HTTP or the WebSocket path from the mode; a server with `/reset` "
    "but no `/step` cannot be played over HTTP and fails `openenv validate --url`.",
    example="A custom app that registers `/reset` and `/step` but forgot `GET /state`.",
    fix="Serve the app made by OpenEnv's `create_app` (it registers the three together), or "
    "add the missing routes.",
)

TASK_API_BROKEN = register(
    "EK428",
    "task-api-broken",
    Severity.ERROR,
    summary="A Task API route lists itself but fails (not 200 with the documented shape, nor 501).",
    what="When `GET /openapi.json` lists OpenEnv 0.10's Task API, envkit calls "
    "`GET /list_environments` (200 with a list of names), then "
    "`GET /{env}/splits` (200 with a list, or 501) and `POST /{env}/num_tasks` "
    "(200 with an integer `num_tasks`, a 4xx for an unknown split, or 501). 501 means "
    "the environment has no TaskProvider: not a defect.",
    why="Trainers and evaluation harnesses enumerate tasks through these routes; a 500 or "
    "a reply of another shape stops them where a 501 tells them to sample by seed.",
    example="`list_splits()` implemented but raising `KeyError`: HTTP 500.",
    fix="Implement `list_splits`, `num_tasks`, `list_tasks`, `get_task`, `get_task_range` "
    "so they return the documented shapes, or leave them out (501).",
)


@dataclass(frozen=True)
class Served:
    """What the route set says about the server.

    Attributes:
        paths: the paths ``/openapi.json`` lists, ``None`` when it gave none (mode unknown:
            played as simulation, envkit's behaviour before 0.10).
        production: production mode (no HTTP ``/reset``, ``/step``, ``/state``).
    """

    paths: frozenset[str] | None
    production: bool = False


def _shown(status: int | None, body: Any, text: str) -> str:
    return f"{status} {fuzz.short_json(body, 120) if body is not None else repr(text[:120])}"


def check(engine: ServerPlayer) -> Served:
    """EK426, EK427 (the mode), EK428 (the Task API). Without an OpenAPI route set nothing
    is evaluated and the server is played as in simulation mode."""
    status, body, _text = engine.get("/openapi.json")
    paths = body.get("paths") if status == 200 and isinstance(body, dict) else None
    if not isinstance(paths, dict) or not paths:
        engine.progress("no /openapi.json route set: server mode unknown")
        return Served(None)
    listed = frozenset(paths)
    present = [p for p in EPISODE_ROUTES if p in listed]
    engine.ran(PRODUCTION_MODE, MODE_ROUTES_INCONSISTENT)
    production = False
    if not present:
        production = True
        engine.add(
            PRODUCTION_MODE,
            "The server runs in production mode (`OPENENV_MODE="
            "production`): HTTP `/reset`, `/step`, `/state` are not served, so the "
            "checks of HTTP `/step` are not applicable; episodes are played over "
            "`/ws`. `WS /harness` (a harness environment) is not opened.",
            mode="production",
        )
    elif len(present) < len(EPISODE_ROUTES):
        missing = [p for p in EPISODE_ROUTES if p not in listed]
        engine.add(
            MODE_ROUTES_INCONSISTENT,
            "The HTTP episode routes must be all served (simulation mode) or none "
            f"(production mode); {', '.join(present)} listed but "
            f"{', '.join(missing)} missing.",
            present=present,
            missing=missing,
        )
    if "/list_environments" in listed:
        _task_api(engine, listed)
    return Served(listed, production)


def _task_api(engine: ServerPlayer, listed: frozenset[str]) -> None:
    """EK428 on the Task API routes the server lists."""
    engine.ran(TASK_API_BROKEN)
    problems: list[str] = []
    status, body, text = engine.get("/list_environments")
    names: list[str] = []
    if status == 200 and isinstance(body, list) and all(isinstance(n, str) for n in body):
        names = body
    elif status != 501:
        problems.append(
            f"`GET /list_environments` must answer 200 with a list of names; got "
            f"{_shown(status, body, text)}"
        )
    if names:
        env = quote(names[0], safe="")
        split = "train"
        if "/{env_name}/splits" in listed:
            status, body, text = engine.get(f"/{env}/splits")
            if status == 200 and isinstance(body, list):
                first = body[0] if body else None
                if isinstance(first, dict) and isinstance(first.get("name"), str):
                    split = first["name"]
            elif status != 501:
                problems.append(
                    f"`GET /{env}/splits` must answer 200 with a list, or 501 "
                    f"without a TaskProvider; got {_shown(status, body, text)}"
                )
        if "/{env_name}/num_tasks" in listed:
            status, body, text = _post_json(engine, f"/{env}/num_tasks", {"split": split})
            ok = (
                status == 200
                and isinstance(body, dict)
                and isinstance(body.get("num_tasks"), int)
                and not isinstance(body.get("num_tasks"), bool)
            )
            if not ok and not (status is not None and 400 <= status < 500) and status != 501:
                problems.append(
                    f"`POST /{env}/num_tasks` must answer 200 with an integer "
                    f"`num_tasks`, a 4xx, or 501; got {_shown(status, body, text)}"
                )
    if problems:
        engine.add(
            TASK_API_BROKEN,
            "Task API routes must answer their documented shape or "
            "501 (no TaskProvider); " + "; ".join(problems) + ".",
            problems=problems,
        )


def _post_json(engine: ServerPlayer, path: str, payload: Any) -> tuple[int | None, Any, str]:
    status, text = engine.post(path, payload)
    try:
        body = json.loads(text) if status is not None else None
    except ValueError:
        body = None
    return status, body, text


def episodes_not_applicable(engine: ServerPlayer, exc: Any) -> None:
    """EK426 when a production-mode server cannot ``reset`` over ``/ws`` either (a harness
    environment): the episode checks are not applicable, which is not a defect."""
    message = str((getattr(exc, "data", None) or {}).get("message", exc))[:200]
    engine.add(
        PRODUCTION_MODE,
        "Production mode: episode checks not applicable; `/ws` "
        f"`reset` answered {getattr(exc, 'code', 'an error')}: {message!r} (a harness "
        "environment is played through `WS /harness`, which envkit does not open).",
        mode="production",
        reset_error=message,
    )
