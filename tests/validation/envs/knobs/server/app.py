"""Server of the knobs environment, wrapped in a middleware that can break /health, /schema,
/metadata, the /ws frame handling and the `state` frames when the mode asks for it."""

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if os.environ.get("KNOBS_START") == "import_error":
    import knobs_missing_dependency  # noqa: F401 - EK401: the server cannot start
if os.environ.get("KNOBS_START") == "slow":
    time.sleep(600)  # EK401: startup timeout

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import KnobsAction, KnobsObservation  # noqa: E402
from server.knobs_environment import KnobsEnvironment, mode  # noqa: E402

_inner = create_app(KnobsEnvironment, KnobsAction, KnobsObservation, env_name="knobs",
                    max_concurrent_envs=int(os.environ.get("KNOBS_CAPACITY", "4")))

_BROKEN = {
    ("bad_health", "/health"): (503, {"status": "starting"}),
    ("bad_schema", "/schema"): (200, {"action": {"type": "strin"}, "observation": {}}),
    ("bad_metadata", "/metadata"): (500, {"detail": "metadata exploded"}),
}


async def app(scope, receive, send):
    m = mode()
    if scope["type"] == "http" and (m, scope["path"]) in _BROKEN:
        status, body = _BROKEN[(m, scope["path"])]
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(body).encode()})
        return
    if scope["type"] == "websocket" and m == "fragile_ws":
        async def fragile_receive():
            message = await receive()
            if message.get("type") == "websocket.receive":
                try:
                    frame = json.loads(message.get("text") or "")
                    if frame.get("type") not in ("reset", "step", "state", "close"):
                        raise ValueError
                except ValueError:
                    raise RuntimeError("fragile handler: cannot handle this frame")
            return message

        await _inner(scope, fragile_receive, send)
        return
    if scope["type"] == "websocket" and m == "bad_state":
        async def state_without_step_count(message):
            if message.get("type") == "websocket.send" and message.get("text"):
                frame = json.loads(message["text"])
                if frame.get("type") == "state":
                    frame["data"].pop("step_count", None)
                    message = {**message, "text": json.dumps(frame)}
            await send(message)

        await _inner(scope, receive, state_without_step_count)
        return
    await _inner(scope, receive, send)
