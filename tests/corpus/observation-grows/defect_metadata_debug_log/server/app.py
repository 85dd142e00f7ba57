"""Walk an 8x8 grid to the goal; reward 1.0 on reaching it, 0.0 otherwise (16 moves max).

A debug trace of every move is kept on the env and shipped in observation.metadata.
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


class GridObservation(Observation):
    position: List[int] = [0, 0]
    goal: List[int] = [0, 0]


class GridEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._pos, self._goal, self._done, self._trace = [0, 0], [0, 0], True, ""

    def _obs(self, reward: float) -> GridObservation:
        return GridObservation(position=list(self._pos), goal=list(self._goal), done=self._done,
                               reward=reward, metadata={"trace": self._trace})

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GridObservation:
        rng = random.Random(seed)
        self._pos = [rng.randint(0, 2), rng.randint(0, 2)]
        self._goal = [rng.randint(5, 7), rng.randint(5, 7)]
        self._done, self._trace = False, f"reset seed={seed} start={self._pos}\n"
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs(0.0)

    def step(self, action: MoveAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GridObservation:
        if self._done:
            return self._obs(0.0)
        self._state.step_count += 1
        dx, dy = MOVES.get(action.direction.strip().lower(), (0, 0))
        before = list(self._pos)
        self._pos = [min(SIZE - 1, max(0, self._pos[0] + dx)),
                     min(SIZE - 1, max(0, self._pos[1] + dy))]
        reached = self._pos == self._goal
        self._done = reached or self._state.step_count >= MAX_MOVES
        self._trace += (f"step {self._state.step_count}: {action.direction!r} {before} -> "
                        f"{self._pos} reward={1.0 if reached else 0.0}\n")
        return self._obs(1.0 if reached else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    (x, y), (gx, gy) = observation["position"], observation["goal"]
    if x != gx:
        return {"direction": "right" if gx > x else "left"}
    return {"direction": "down" if gy > y else "up"}


app = create_app(GridEnv, MoveAction, GridObservation, env_name="grid_trace",
                 max_concurrent_envs=8)
