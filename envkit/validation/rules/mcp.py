"""EK4xx MCP: ``POST /mcp`` answers JSON-RPC 2.0, as OpenEnv's ``create_app`` does.

Source: OpenEnv 0.10's ``create_app`` (``POST /mcp``, in simulation and
production mode) and ``openenv validate --url``'s ``mcp_endpoint`` criterion (HTTP 200 and
``"jsonrpc": "2.0"``). What a plain 0.10 server answers, measured: ``tools/list`` on an
environment without MCP tools gives ``{"jsonrpc": "2.0", "id": 1, "error": {"code": -32603,
...}}``; a body that is not JSON gives ``{"jsonrpc": "2.0", "id": null, "error": {"code":
-32700, "message": "Parse error"}}``; both with HTTP 200. Only deviations from that envelope
are findings: an environment need not offer MCP tools.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from envkit.envdir.project import no_answer
from envkit.findings import Severity, register
from envkit.validation import fuzz
from envkit.validation.engine import ServerPlayer
from envkit.validation.rules.liveness import unanswered

MCP_NOT_JSON_RPC = register(
    "EK424",
    "mcp-not-json-rpc",
    Severity.ERROR,
    summary="POST /mcp does not answer a JSON-RPC 2.0 response.",
    what='envkit sends `{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}` and a '
    "body that is not JSON to `POST /mcp`. Each answer must be HTTP 200 with a JSON-RPC "
    '2.0 response: `"jsonrpc": "2.0"`, the request\'s `id` (`null` for the unparsable '
    "body), and exactly one of `result` or `error`, an `error` being `{code: integer, "
    'message: string}`. An error is fine (`-32603` "Environment does not support MCP" '
    "is what OpenEnv 0.10 answers for an environment without tools); a reply that is not "
    "JSON-RPC is not.",
    why="MCP clients (agents calling the environment's tools, `openenv validate --url`'s "
    "`mcp_endpoint` criterion) parse every reply as JSON-RPC; an HTML page, a FastAPI "
    '`{"detail": ...}` or an error envelope without `code` breaks them.',
    example='A custom `/mcp` route that returns `{"tools": [...]}` without the envelope, '
    "or that raises and answers HTTP 500 on a body that is not JSON.",
    fix="Let OpenEnv's `create_app` serve `/mcp` (subclass `MCPEnvironment` for tools), or "
    'answer every request with `{"jsonrpc": "2.0", "id": <request id>, "result": '
    '...}` / `"error": {"code": -32700, "message": "Parse error"}`.',
)

MCP_MISSING = register(
    "EK425",
    "mcp-endpoint-missing",
    Severity.WARNING,
    summary="POST /mcp is not served.",
    what="`POST /mcp` answers 404 or 405. OpenEnv's `create_app` serves it in both modes "
    "(0.3.0 and 0.10).",
    why="`openenv validate --url` fails a server without it (`mcp_endpoint`), and MCP "
    "clients cannot list the environment's tools.",
    example="A hand-written FastAPI app that serves /health, /schema and /ws only.",
    fix="Build the app with OpenEnv's `create_app`, or add a `POST /mcp` route answering "
    "JSON-RPC 2.0.",
)

PROBE = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
GARBAGE = b"envkit: this is not JSON {"


@dataclass(frozen=True)
class Reply:
    """One ``POST /mcp`` answer: HTTP ``status`` (``None``: no answer, ``text`` says why),
    the parsed JSON ``body`` (``None`` when not JSON) and the first 300 characters."""

    status: int | None
    body: Any
    text: str


def post(engine: ServerPlayer, content: bytes) -> Reply:
    """``POST /mcp`` with ``content`` as the body, on a fresh connection
    (:meth:`ServerPlayer.post_client`)."""
    import httpx  # ~450 ms: `envkit rules` imports this module and never posts

    engine.check_budget()
    try:
        r = engine.post_client().post(
            engine.url + "/mcp", content=content, headers={"Content-Type": "application/json"}
        )
    except httpx.TimeoutException:
        engine.check_alive()
        engine.unanswered.append("POST /mcp")
        return Reply(None, None, no_answer("`POST /mcp`", engine.settings.reply_s))
    except httpx.HTTPError as exc:
        engine.check_alive()
        return Reply(None, None, f"{type(exc).__name__}: {exc}")
    try:
        body = r.json()
    except ValueError:
        body = None
    return Reply(r.status_code, body, r.text[:300])


def envelope_problem(reply: Reply, request_id: Any) -> str | None:
    """What makes ``reply`` not a JSON-RPC 2.0 response to ``request_id``, else ``None``."""
    if reply.status is None:
        return f"no answer ({reply.text})"
    shown = fuzz.short_json(reply.body, 120) if reply.body is not None else repr(reply.text[:120])
    if reply.status != 200:
        return f"HTTP {reply.status} {shown} (JSON-RPC answers 200, errors inside the envelope)"
    body = reply.body
    if not isinstance(body, dict):
        return f"a body that is not a JSON object: {shown}"
    if body.get("jsonrpc") != "2.0":
        return f'`jsonrpc` is {fuzz.short_json(body.get("jsonrpc"))}, not "2.0": {shown}'
    if body.get("id") != request_id:
        return f"`id` is {fuzz.short_json(body.get('id'))}, not {fuzz.short_json(request_id)}"
    if ("result" in body) == ("error" in body):
        return f"it must hold exactly one of `result` and `error`: {shown}"
    err = body.get("error")
    if "error" in body and not (
        isinstance(err, dict)
        and isinstance(err.get("code"), int)
        and not isinstance(err.get("code"), bool)
        and isinstance(err.get("message"), str)
    ):
        return f"`error` must be {{code: integer, message: string}}; got {fuzz.short_json(err)}"
    return None


def check(engine: ServerPlayer) -> list[Any]:
    """EK424, EK425: a ``tools/list`` request and a body that is not JSON.

    Returns:
        The tools ``tools/list`` listed (``result.tools``; ``[]`` when none or no answer),
        which the action shapes of later checks read (:mod:`envkit.validation.offered`).
    """
    engine.progress("checking POST /mcp")
    first = post(engine, json.dumps(PROBE).encode())
    if unanswered(engine, "POST /mcp"):  # the budget ran out, not the route: EK422 says so
        return
    engine.ran(MCP_NOT_JSON_RPC, MCP_MISSING)
    if first.status in (404, 405):
        engine.unran(MCP_NOT_JSON_RPC)
        engine.add(
            MCP_MISSING,
            f"`POST /mcp` should answer JSON-RPC 2.0; it answered "
            f"HTTP {first.status}: the route is not served.",
        )
        return []
    problems = []
    problem = envelope_problem(first, PROBE["id"])
    if problem:
        problems.append(f"`tools/list` got {problem}")
    garbage = post(engine, GARBAGE)
    problem = envelope_problem(garbage, None)
    if unanswered(engine, "POST /mcp"):
        pass
    elif problem:
        problems.append(f"a body that is not JSON got {problem}")
    elif (garbage.body.get("error") or {}).get("code") != -32700:
        got = garbage.body.get("error") or garbage.body.get("result")
        problems.append(
            "a body that is not JSON must get error code -32700 (Parse error); got "
            f"{fuzz.short_json(got)}"
        )
    if problems:
        engine.add(
            MCP_NOT_JSON_RPC,
            "`POST /mcp` must answer HTTP 200 with a JSON-RPC 2.0 "
            "response; " + "; ".join(problems) + ".",
            problems=problems,
        )
    result = first.body.get("result") if isinstance(first.body, dict) else None
    tools = result.get("tools") if isinstance(result, dict) else None
    return tools if isinstance(tools, list) else []
