"""Workspace task with file tools: write out.txt holding the words of in.txt de-duplicated and sorted."""
import json
import random
from typing import Any, Dict, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_STEPS = 6
WORDS = ["delta", "alpha", "kilo", "echo", "bravo", "lima", "golf", "hotel", "india", "juliet"]
TOOLS = [
    {"name": "list_files", "input_schema": {"type": "object", "properties": {}}},
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


def solve(text: str) -> str:
    return "\n".join(sorted(set(text.split()))) + "\n"


class WorkspaceEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._files: Dict[str, str] = {}
        self._done = True

    def _obs(self, output: str = "", **kw: Any) -> ToolObservation:
        return ToolObservation(instructions="Write out.txt: the distinct words of in.txt, sorted, one per line. "
                                            "tests/cases.json holds the checks run on submit.",
                               tools=TOOLS, output=output, **kw)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ToolObservation:
        rng = random.Random(seed)
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 20)))
        self._files = {"in.txt": text + "\n",
                       "tests/cases.json": json.dumps([{"file": "out.txt", "expected_from": "in.txt"}])}
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs()

    def _verify(self) -> bool:
        cases = json.loads(self._files.get("tests/cases.json", "[]"))
        return all(self._files.get(c["file"]) == solve(self._files.get(c["expected_from"], ""))
                   for c in cases)

    def step(self, action: ToolAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ToolObservation:
        if self._done:
            return self._obs("Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        args = action.arguments or {}
        if action.tool_name == "list_files":
            out = "\n".join(sorted(self._files))
        elif action.tool_name == "read_file":
            out = self._files.get(str(args.get("path")), "error: no such file")
        elif action.tool_name == "write_file":
            self._files[str(args.get("path"))] = str(args.get("content", ""))
            out = "ok"
        elif action.tool_name == "submit":
            self._done = True
            try:
                ok = self._verify()
            except (ValueError, KeyError, TypeError):
                ok = False
            return self._obs("all checks pass" if ok else "checks failed", done=True, reward=1.0 if ok else 0.0)
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
    out = observation.get("output", "")
    if out == "":
        return {"tool_name": "read_file", "arguments": {"path": "in.txt"}}
    if out != "ok":
        return {"tool_name": "write_file", "arguments": {"path": "out.txt", "content": solve(out)}}
    return {"tool_name": "submit", "arguments": {}}


app = create_app(WorkspaceEnv, ToolAction, ToolObservation, env_name="workspace_words", max_concurrent_envs=8)
