"""Walk an 8x8 grid to the goal; reward 1.0 on reaching it, 0.0 otherwise (16 moves max).

The observation is built from the env's internal state, including the trail of visited cells.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MOVES = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
SIZE, MAX_MOVES = 8, 16


class MoveAction(Action):
    direction: str


class WalkState(State):
    position: List[int] = [0, 0]
    goal: List[int] = [0, 0]
    visited: List[List[int]] = []


class GridObservation(Observation):
    position: List[int] = [0, 0]
    goal: List[int] = [0, 0]
    visited: List[List[int]] = []


class GridEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = WalkState(episode_id=str(uuid4()))
        self._done = True

    def _obs(self, reward: float) -> GridObservation:
        # the observation mirrors the state so the agent "sees everything it needs"
        s = self._state
        return GridObservation(position=list(s.position), goal=list(s.goal),
                               visited=[list(c) for c in s.visited], done=self._done,
                               reward=reward)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GridObservation:
        rng = random.Random(seed)
        start = [rng.randint(0, 2), rng.randint(0, 2)]
        goal = [rng.randint(5, 7), rng.randint(5, 7)]
        self._state = WalkState(episode_id=episode_id or str(uuid4()), position=start, goal=goal,
                                visited=[list(start)])
        self._done = False
        return self._obs(0.0)

    def step(self, action: MoveAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GridObservation:
        if self._done:
            return self._obs(0.0)
        s = self._state
        s.step_count += 1
        dx, dy = MOVES.get(action.direction.strip().lower(), (0, 0))
        s.position = [min(SIZE - 1, max(0, s.position[0] + dx)),
                      min(SIZE - 1, max(0, s.position[1] + dy))]
        s.visited = s.visited + [list(s.position)]
        reached = s.position == s.goal
        self._done = reached or s.step_count >= MAX_MOVES
        return self._obs(1.0 if reached else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    (x, y), (gx, gy) = observation["position"], observation["goal"]
    if x != gx:
        return {"direction": "right" if gx > x else "left"}
    return {"direction": "down" if gy > y else "up"}


app = create_app(GridEnv, MoveAction, GridObservation, env_name="grid_visited",
                 max_concurrent_envs=8)
