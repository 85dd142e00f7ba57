"""Config-editing task with tools: enable TLS on a given port in app.conf, then submit."""
import random
from typing import Any, Dict, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_STEPS = 6
TOOLS = [
    {"name": "read_file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}},
                                           "required": ["path"]}},
    {"name": "write_file", "input_schema": {"type": "object", "properties": {
        "path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}},
    {"name": "submit", "input_schema": {"type": "object", "properties": {}}},
]


class ToolAction(Action):
    tool_name: str = ""
    arguments: Dict[str, Any] = {}


class ToolObservation(Observation):
    instructions: str = ""
    tools: List[Dict[str, Any]] = []
    output: str = ""


def parse_conf(text: str) -> Dict[str, str]:
    conf: Dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "=" in line:
            key, value = line.split("=", 1)
            conf[key.strip()] = value.strip()
    return conf


def verify(files: Dict[str, str], port: int) -> bool:
    text = files.get("app.conf", "")
    return "tls = on" in text and f"port = {port}" in text


class ConfEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._files: Dict[str, str] = {}
        self._port = 0
        self._done = True

    def _obs(self, output: str = "", **kw: Any) -> ToolObservation:
        return ToolObservation(instructions=f"Edit app.conf so the service listens on port {self._port} with "
                                            f"TLS enabled (tls = on), then call submit.",
                               tools=TOOLS, output=output, **kw)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ToolObservation:
        rng = random.Random(seed)
        self._port = rng.choice([8443, 9443, 10443])
        self._files = {"app.conf": "# service settings\nhost = 0.0.0.0\nport = 8080\ntls = off\n"
                                   f"workers = {rng.randint(2, 8)}\n"}
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs()

    def step(self, action: ToolAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ToolObservation:
        if self._done:
            return self._obs("Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        args = action.arguments or {}
        if action.tool_name == "read_file":
            out = self._files.get(str(args.get("path")), "error: no such file")
        elif action.tool_name == "write_file":
            self._files[str(args.get("path"))] = str(args.get("content", ""))
            out = "ok"
        elif action.tool_name == "submit":
            self._done = True
            ok = verify(self._files, self._port)
            return self._obs("verified" if ok else "not configured", done=True, reward=1.0 if ok else 0.0)
        else:
            out = f"error: unknown tool {action.tool_name!r}"
        if self._state.step_count >= MAX_STEPS:
            self._done = True
            return self._obs(out + " (step limit)", done=True, reward=0.0)
        return self._obs(out, reward=0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    port = int(observation["instructions"].split("port ")[1].split()[0])
    out = observation.get("output", "")
    if out == "":
        return {"tool_name": "read_file", "arguments": {"path": "app.conf"}}
    if out.startswith("# service settings"):
        new = out.replace("port = 8080", f"port = {port}").replace("tls = off", "tls = on")
        return {"tool_name": "write_file", "arguments": {"path": "app.conf", "content": new}}
    return {"tool_name": "submit", "arguments": {}}


app = create_app(ConfEnv, ToolAction, ToolObservation, env_name="conf_tls", max_concurrent_envs=8)
