"""Debugging quiz: which line of the snippet raised the error shown?

The observation's `error` is the exception the snippet raised when it was run (the task,
shown from reset on); `code` is the numbered snippet. Reward: 1.0 for the right line
number, 0.0 for a wrong or unreadable answer (then `feedback` says why).
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

BUGS = [("total = sum(values) / count", "ZeroDivisionError: division by zero"),
        ("name = user['name']", "KeyError: 'name'"),
        ("n = int(text)", "ValueError: invalid literal for int() with base 10: 'abc'"),
        ("first = items[0]", "IndexError: list index out of range")]
FILLER = ["values = load()", "count = len(values) - len(values)", "user = {}", "text = 'abc'",
          "items = []", "log('start')", "log('done')"]


class LineAction(Action):
    line: str = Field(..., max_length=20)


class DebugObservation(Observation):
    code: List[str] = Field(default_factory=list)
    error: str = ""
    feedback: str = ""


class DebugEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._code: List[str] = []
        self._error, self._line, self._done = "", 0, False

    def _obs(self, feedback: str, reward: float) -> DebugObservation:
        return DebugObservation(code=list(self._code), error=self._error, feedback=feedback,
                                done=self._done, reward=reward)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> DebugObservation:
        rng = random.Random(seed)
        bad, self._error = rng.choice(BUGS)
        lines = rng.sample(FILLER, 4)
        self._line = rng.randint(2, 5)
        lines.insert(self._line - 1, bad)
        self._code = [f"{i + 1}: {s}" for i, s in enumerate(lines)]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs("Which line raised the error?", 0.0)

    def step(self, action: LineAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> DebugObservation:
        if not self._code or self._done:
            self._done = True
            return self._obs("Episode over.", 0.0)
        self._state.step_count += 1
        self._done = True
        text = action.line.strip()
        if not text.isdigit():
            return self._obs(f"Answer with a line number, not {text[:20]!r}.", 0.0)
        if int(text) == self._line:
            return self._obs("Correct.", 1.0)
        return self._obs("Not that line.", 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    bad = {b for b, _ in BUGS}
    for entry in observation["code"]:
        number, stmt = entry.split(": ", 1)
        if stmt in bad:
            return {"line": number}
    return {"line": "1"}


app = create_app(DebugEnv, LineAction, DebugObservation, env_name="debugquiz",
                 max_concurrent_envs=8)
