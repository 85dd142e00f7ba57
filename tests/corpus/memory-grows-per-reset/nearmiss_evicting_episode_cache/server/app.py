"""Count the open cells in one row of a random 31x31 grid maze; 1.0 if right, 0.0 otherwise.

The newest 32 episodes' rendered mazes are cached by episode id for a debug view.
"""
import random
import re
import time
from collections import OrderedDict
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

SIZE = 31
# episode_id -> {"grid", "render", "created"}; the newest 32 episodes for the debug view
_RENDER_CACHE: "OrderedDict[str, Dict[str, Any]]" = OrderedDict()
CACHE_CAP = 32


class AnswerAction(Action):
    answer: str


class MazeObservation(Observation):
    maze: str = ""
    question: str = ""


class MazeEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._answer, self._done = None, True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> MazeObservation:
        rng = random.Random(seed)
        grid = [[1 if rng.random() < 0.35 else 0 for _ in range(SIZE)] for _ in range(SIZE)]
        render = "\n".join("".join("#" if c else "." for c in row) for row in grid)
        row = rng.randrange(SIZE)
        self._answer, self._done = SIZE - sum(grid[row]), False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        _RENDER_CACHE[self._state.episode_id] = {"grid": grid, "render": render,
                                                 "created": time.time()}
        while len(_RENDER_CACHE) > CACHE_CAP:
            _RENDER_CACHE.popitem(last=False)
        return MazeObservation(maze=render, question=f"How many open cells ('.') are in row {row}?",
                               reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> MazeObservation:
        if self._answer is None or self._done:
            return MazeObservation(done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        ok = action.answer.strip() == str(self._answer)
        return MazeObservation(done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    row = int(re.search(r"row (\d+)", observation["question"]).group(1))
    return {"answer": str(observation["maze"].split("\n")[row].count("."))}


app = create_app(MazeEnv, AnswerAction, MazeObservation, env_name="maze_rows_capped",
                 max_concurrent_envs=8)
