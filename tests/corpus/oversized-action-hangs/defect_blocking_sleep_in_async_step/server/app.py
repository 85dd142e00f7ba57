"""A tiny shell: type the command that prints the requested file; 1.0 if right, else 0.0.

The terminal is simulated at 9600 baud (960 characters a second) so that agents feel the cost of
long commands.
"""
import random
import time
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

FILES = {"notes.txt": "buy milk", "todo.md": "- fix bug", "hosts": "127.0.0.1 localhost",
         "motd": "welcome", "version": "1.4.2"}
CHARS_PER_S = 960


class CommandAction(Action):
    command: str


class TerminalObservation(Observation):
    prompt: str = ""
    output: str = ""


class TerminalEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target, self._done = None, True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TerminalObservation:
        self._target, self._done = random.Random(seed).choice(sorted(FILES)), False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return TerminalObservation(prompt=f"Print the contents of {self._target}.", reward=0.0)

    def _run(self, command: str) -> TerminalObservation:
        if self._target is None or self._done:
            return TerminalObservation(done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        parts = command.split()
        if len(parts) == 2 and parts[0] == "cat" and parts[1] in FILES:
            out = FILES[parts[1]]
        else:
            out = f"sh: {command[:60]}: command not found"
        ok = parts == ["cat", self._target]
        return TerminalObservation(output=out, done=True, reward=1.0 if ok else 0.0)

    def step(self, action: CommandAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TerminalObservation:
        time.sleep(len(action.command) / CHARS_PER_S)
        return self._run(action.command)

    async def step_async(self, action: CommandAction, timeout_s: Optional[float] = None,
                         **kwargs: Any) -> TerminalObservation:
        time.sleep(len(action.command) / CHARS_PER_S)  # the terminal's baud rate
        return self._run(action.command)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"command": "cat " + observation["prompt"].split()[-1].rstrip(".")}


app = create_app(TerminalEnv, CommandAction, TerminalObservation, env_name="baud_shell",
                 max_concurrent_envs=8)
