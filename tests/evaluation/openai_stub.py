"""A small OpenAI-compatible chat-completions server for tests (served by uvicorn on
127.0.0.1 and driven through the REAL `openai` client).

Answers are deterministic functions of the request. The model name picks the behaviour:

- ``echo``: reply the observation's ``target`` in a json fence (solves echo).
- ``plain``: reply the target as bare text (exercises the single-string-field fallback).
- ``schedule:<tag>:<codes>``: one code per episode, in the order episodes start (a
  first-turn request starts one; use with concurrency 1): ``1`` solve at once, ``0``
  always answer ``{"message": ""}`` (reward 0), ``p`` an empty reply first (a parse
  failure), then solve.
- ``slow:<ms>``: like ``echo`` after sleeping ``ms`` milliseconds.
- ``ratelimit``: always 429 with ``retry-after-ms: 5``.
- ``toolong``: 400 ``context_length_exceeded`` as OpenAI sends it.

Every request must carry ``Authorization: Bearer <key>`` (401 otherwise). ``GET /_log``
returns what was received (model, temperature, message count, max in-flight requests).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
from collections import defaultdict
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

_OBS = re.compile(r"```json\n(.*?)\n```", re.DOTALL)


def _error(
    status: int, message: str, code: str, kind: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": kind, "param": None, "code": code}},
        status_code=status,
        headers=headers,
    )


def make_app(api_key: str) -> FastAPI:
    app = FastAPI()
    state: dict[str, Any] = {
        "requests": [],
        "inflight": 0,
        "max_inflight": 0,
        "episodes": defaultdict(int),
    }
    lock = threading.Lock()
    ids = itertools.count(1)

    @app.get("/_log")
    def log() -> dict[str, Any]:
        return {k: v for k, v in state.items() if k in ("requests", "inflight", "max_inflight")}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        body = await request.json()
        model = str(body.get("model", ""))
        messages = body.get("messages") or []
        with lock:
            state["requests"].append(
                {
                    "model": model,
                    "temperature": body.get("temperature"),
                    "messages": len(messages),
                    "max_tokens": body.get("max_tokens"),
                    "system": messages[0]["content"] if messages else None,
                    "authorized": request.headers.get("authorization") == f"Bearer {api_key}",
                }
            )
        if request.headers.get("authorization") != f"Bearer {api_key}":
            return _error(
                401, "Incorrect API key provided.", "invalid_api_key", "invalid_request_error"
            )
        if model == "ratelimit":
            return _error(
                429,
                "Rate limit reached for requests",
                "rate_limit_exceeded",
                "requests",
                headers={"retry-after-ms": "5"},
            )
        if model == "toolong":
            return _error(
                400,
                "This model's maximum context length is 8192 tokens. However, "
                "your messages resulted in 9000 tokens.",
                "context_length_exceeded",
                "invalid_request_error",
            )
        users = [m for m in messages if m.get("role") == "user"]
        assistants = [m for m in messages if m.get("role") == "assistant"]
        found = _OBS.findall(users[-1]["content"]) if users else []
        target = json.loads(found[-1]).get("target", "") if found else ""
        reply = f"```json\n{json.dumps({'message': target})}\n```"
        with lock:
            state["inflight"] += 1
            state["max_inflight"] = max(state["max_inflight"], state["inflight"])
        try:
            if model == "plain":
                reply = target
            elif model.startswith("slow:"):
                await asyncio.sleep(int(model.split(":")[1]) / 1000)
            elif model.startswith("schedule:"):
                codes = model.split(":")[2]
                if not assistants:  # first turn: a new episode
                    with lock:
                        index = state["episodes"][model]
                        state["episodes"][model] += 1
                    code = codes[index % len(codes)]
                    state.setdefault("current", {})[model] = code
                else:  # later turns belong to the episode that started last (concurrency 1)
                    code = state["current"][model]
                if code == "0":
                    reply = '{"message": ""}'
                elif code == "p" and not assistants:
                    reply = ""
            elif model != "echo":
                return _error(
                    404,
                    f"The model `{model}` does not exist.",
                    "model_not_found",
                    "invalid_request_error",
                )
        finally:
            with lock:
                state["inflight"] -= 1
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in messages) // 4
        completion_tokens = max(1, len(reply) // 4)
        return {
            "id": f"chatcmpl-{next(ids)}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": reply},
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    return app
