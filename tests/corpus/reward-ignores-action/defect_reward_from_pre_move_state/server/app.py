"""Walk a 5x5 grid from the corner to the goal; reward 1.0 when on the goal, 12 moves.

Defect: step() evaluates the reward and done on the position BEFORE the move and applies
the move afterwards ("observe, then act"), so the reward of a step is fixed by the earlier
moves, whatever this step's move is; the agent must stand on the goal for one more step.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

SIZE, MAX_STEPS = 5, 12
MOVES = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0), "stay": (0, 0)}


class MoveAction(Action):
    move: str


class GridObservation(Observation):
    x: int = 0
    y: int = 0
    goal_x: int = 0
    goal_y: int = 0
    legal_actions: List[str] = list(MOVES)


class GridEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._pos, self._goal = (0, 0), (SIZE - 1, SIZE - 1)
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GridObservation:
        rng = random.Random(seed)
        self._pos, self._goal = (0, 0), (rng.randint(2, SIZE - 1), rng.randint(2, SIZE - 1))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs(0.0)

    def _obs(self, reward: float) -> GridObservation:
        return GridObservation(x=self._pos[0], y=self._pos[1], goal_x=self._goal[0],
                               goal_y=self._goal[1], reward=reward, done=self._done)

    def step(self, action: MoveAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GridObservation:
        if self._done:
            return self._obs(0.0)
        self._state.step_count += 1
        at_goal = self._pos == self._goal
        reward = 1.0 if at_goal else 0.0
        self._done = at_goal or self._state.step_count >= MAX_STEPS
        if not self._done:
            dx, dy = MOVES.get(action.move, (0, 0))
            self._pos = (min(max(self._pos[0] + dx, 0), SIZE - 1),
                         min(max(self._pos[1] + dy, 0), SIZE - 1))
        return self._obs(reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    if observation["x"] < observation["goal_x"]:
        return {"move": "right"}
    if observation["y"] < observation["goal_y"]:
        return {"move": "down"}
    return {"move": "stay"}


app = create_app(GridEnv, MoveAction, GridObservation, env_name="grid_pre_move",
                 max_concurrent_envs=8)
