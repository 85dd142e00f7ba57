"""Walk a 5x5 grid to the goal cell, 8 moves.

Defect: per-task step telemetry is kept in a module-level dict keyed by the task id, which is
derived from the seed ("grid-<seed>"), and `state` reports step_count from that dict so the
dashboard and the state agree. reset() zeroes the task's entry and step() bumps it. Alone a
session counts exactly; two sessions on the same seed (a GRPO group) count into one entry, so
each session's step_count includes the other's steps (and the other's reset zeroes it).
Sessions on different seeds have different entries. The move budget, observations and rewards
use the instance's own move counter, so only state.step_count is wrong.
"""
import random
from typing import Any, Dict, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

SIZE = 5
MAX_MOVES = 8
MOVES = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}

_TASK_STEPS: Dict[str, int] = {}  # task id -> steps taken in its current episode


class MoveAction(Action):
    direction: str = Field(..., pattern=r"^(up|down|left|right)$")


class GridObservation(Observation):
    x: int = 0
    y: int = 0
    goal_x: int = 0
    goal_y: int = 0
    moves_left: int = MAX_MOVES
    feedback: str = ""


class GridState(State):
    task_id: str = ""


class GridEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._episode_id = str(uuid4())
        self._task_id = ""
        self._pos = self._goal = (0, 0)
        self._moves, self._done = 0, True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GridObservation:
        rng = random.Random(seed)
        cells = [(x, y) for x in range(SIZE) for y in range(SIZE)]
        self._pos, self._goal = rng.sample(cells, 2)
        self._task_id = f"grid-{seed}"
        self._episode_id = episode_id or str(uuid4())
        self._moves, self._done = 0, False
        _TASK_STEPS[self._task_id] = 0
        return self._obs("Reach the goal.", 0.0)

    def step(self, action: MoveAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GridObservation:
        if not self._task_id or self._done:
            return GridObservation(feedback="Episode is over; call reset().", done=True,
                                   reward=0.0)
        _TASK_STEPS[self._task_id] = _TASK_STEPS.get(self._task_id, 0) + 1
        self._moves += 1
        dx, dy = MOVES[action.direction]
        x, y = self._pos
        self._pos = (min(max(x + dx, 0), SIZE - 1), min(max(y + dy, 0), SIZE - 1))
        if self._pos == self._goal:
            self._done = True
            return self._obs("Goal reached!", 1.0)
        self._done = self._moves >= MAX_MOVES
        return self._obs("Out of moves." if self._done else "Keep walking.", 0.0)

    def _obs(self, text: str, reward: float) -> GridObservation:
        return GridObservation(x=self._pos[0], y=self._pos[1], goal_x=self._goal[0],
                               goal_y=self._goal[1], moves_left=MAX_MOVES - self._moves,
                               feedback=text, done=self._done, reward=reward)

    @property
    def state(self) -> GridState:
        return GridState(episode_id=self._episode_id, task_id=self._task_id,
                         step_count=_TASK_STEPS.get(self._task_id, 0))


def policy(observation: dict) -> dict:
    x, y = observation.get("x", 0), observation.get("y", 0)
    gx, gy = observation.get("goal_x", 0), observation.get("goal_y", 0)
    if x != gx:
        return {"direction": "right" if gx > x else "left"}
    return {"direction": "down" if gy > y else "up"}


app = create_app(GridEnv, MoveAction, GridObservation, env_name="grid_task_telemetry",
                 max_concurrent_envs=8)
