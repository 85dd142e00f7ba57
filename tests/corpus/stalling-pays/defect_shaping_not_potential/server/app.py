"""Walk a 6x6 grid from the start to the goal (both drawn from the seed).

Reward: 1.0 on reaching the goal; +0.1 shaping on a move that brings the agent closer
(Manhattan distance), "to make the sparse reward learnable".
Defect: moving away costs nothing (the shaping is not a potential difference), so
away-and-back pairs pay 0.1 per pair: a 20-step dithering walk out-returns the shortest path.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

N, MAX_STEPS = 6, 20
MOVES = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


class MoveAction(Action):
    direction: str = Field(..., pattern="^(up|down|left|right)$")


class GridObservation(Observation):
    agent: List[int] = Field(default_factory=list)
    goal: List[int] = Field(default_factory=list)
    legal_actions: List[str] = Field(default_factory=lambda: list(MOVES))


def dist(a, b) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


class GridEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._agent: List[int] = []
        self._goal: List[int] = []
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GridObservation:
        rng = random.Random(seed)
        self._agent = [rng.randrange(N), rng.randrange(N)]
        self._goal = list(self._agent)
        while dist(self._agent, self._goal) < 3:
            self._goal = [rng.randrange(N), rng.randrange(N)]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return GridObservation(agent=list(self._agent), goal=list(self._goal), reward=0.0)

    def step(self, action: MoveAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GridObservation:
        if not self._goal or self._done:
            return GridObservation(agent=list(self._agent), goal=list(self._goal),
                                   done=True, reward=0.0)
        self._state.step_count += 1
        before = dist(self._agent, self._goal)
        dx, dy = MOVES[action.direction]
        self._agent = [min(N - 1, max(0, self._agent[0] + dx)),
                       min(N - 1, max(0, self._agent[1] + dy))]
        after = dist(self._agent, self._goal)
        if after == 0:
            reward = 1.0
        else:
            reward = 0.1 if after < before else 0.0
        self._done = after == 0 or self._state.step_count >= MAX_STEPS
        return GridObservation(agent=list(self._agent), goal=list(self._goal),
                               done=self._done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    (ax, ay), (gx, gy) = observation["agent"], observation["goal"]
    if ax != gx:
        return {"direction": "right" if gx > ax else "left"}
    return {"direction": "down" if gy > ay else "up"}


app = create_app(GridEnv, MoveAction, GridObservation, env_name="grid", max_concurrent_envs=8)
