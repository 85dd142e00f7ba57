"""A small OpenEnv-speaking server whose misbehaviour a test sets while it runs: it closes the
WebSocket in the middle of an episode (a replica gone, a balancer restarted) for the first
sessions, or answers a step with an observation of many megabytes.

Served by a real uvicorn on 127.0.0.1 (tests/evaluation/conftest.py, ``flaky_server``); the
frames are those of OpenEnv's ``/ws`` (docs/protocol.md): ``reset``, ``step``, ``state`` and
``close`` in, ``observation``, ``state`` and ``error`` out. An episode is 3 steps; the last
one's reward is ``final_reward`` (1.0, the maximum, unless a test lowers it), the others' 0.0.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from fastapi import FastAPI, WebSocket, WebSocketDisconnect

STEPS = 3
ACTION_SCHEMA = {
    "type": "object",
    "properties": {"message": {"type": "string", "maxLength": 10}},
    "required": ["message"],
}


@dataclass
class Knobs:
    """What the server does wrong; tests change it between runs.

    Attributes:
        drop_after: the step frame after this many answered steps of an episode is not
            answered: the WebSocket is closed instead (``None``: never).
        drops_left: how many sessions are still dropped that way (each drop counts one).
        big_observation_bytes: when > 0, the first step answers an observation holding a
            string of this many bytes.
        final_reward: the reward of an episode's last step (every episode's return).
        sessions: WebSocket sessions accepted so far.
    """

    drop_after: int | None = None
    drops_left: int = 0
    big_observation_bytes: int = 0
    final_reward: float = 1.0
    sessions: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take_drop(self) -> bool:
        with self.lock:
            if self.drops_left <= 0:
                return False
            self.drops_left -= 1
            return True


def make_app(knobs: Knobs) -> FastAPI:
    app = FastAPI()

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "healthy"}

    @app.get("/schema")
    def schema() -> dict[str, object]:
        return {
            "action": ACTION_SCHEMA,
            "observation": {"type": "object", "properties": {"echoed": {"type": "string"}}},
            "state": {"type": "object"},
        }

    @app.get("/metadata")
    def metadata() -> dict[str, str]:
        return {"name": "flaky", "description": "Says back what it is told."}

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        await socket.accept()
        with knobs.lock:
            knobs.sessions += 1
        steps = 0
        try:
            while True:
                frame = await socket.receive_json()
                kind = frame.get("type")
                if kind == "close":
                    await socket.close()
                    return
                if kind == "state":
                    await socket.send_json({"type": "state", "data": {"step_count": steps}})
                elif kind == "reset":
                    steps = 0
                    await socket.send_json(_observation({"echoed": ""}, 0.0, False))
                elif kind == "step":
                    drop = knobs.drop_after is not None and steps >= knobs.drop_after
                    if drop and knobs.take_drop():
                        await socket.close(code=1011)
                        return
                    steps += 1
                    echoed = str((frame.get("data") or {}).get("message", ""))
                    obs: dict[str, object] = {"echoed": echoed}
                    if steps == 1 and knobs.big_observation_bytes:
                        obs["blob"] = "x" * knobs.big_observation_bytes
                    done = steps >= STEPS
                    await socket.send_json(
                        _observation(obs, knobs.final_reward if done else 0.0, done)
                    )
                else:
                    await socket.send_json(
                        {"type": "error", "data": {"code": "UNKNOWN_TYPE", "message": str(kind)}}
                    )
        except WebSocketDisconnect:
            return

    return app


def _observation(obs: dict[str, object], reward: float, done: bool) -> dict[str, object]:
    return {"type": "observation", "data": {"observation": obs, "reward": reward, "done": done}}
