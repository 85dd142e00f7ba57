"""Walk an 8x8 grid to the goal; reward 1.0 on reaching it, 0.0 otherwise (16 moves max).

The full move log lives in State (GET /state, for debugging); each observation carries only the
position, the goal and the last move's feedback.
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
    log: List[str] = []


class GridObservation(Observation):
    position: List[int] = [0, 0]
    goal: List[int] = [0, 0]
    feedback: str = ""


class GridEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = WalkState(episode_id=str(uuid4()))
        self._pos, self._goal, self._done = [0, 0], [0, 0], True

    def _obs(self, reward: float, feedback: str) -> GridObservation:
        return GridObservation(position=list(self._pos), goal=list(self._goal), feedback=feedback,
                               done=self._done, reward=reward)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GridObservation:
        rng = random.Random(seed)
        self._pos = [rng.randint(0, 2), rng.randint(0, 2)]
        self._goal = [rng.randint(5, 7), rng.randint(5, 7)]
        self._done = False
        self._state = WalkState(episode_id=episode_id or str(uuid4()),
                                log=[f"start {self._pos} goal {self._goal}"])
        return self._obs(0.0, "Reach the goal.")

    def step(self, action: MoveAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GridObservation:
        if self._done:
            return self._obs(0.0, "Episode over.")
        self._state.step_count += 1
        d = action.direction.strip().lower()
        dx, dy = MOVES.get(d, (0, 0))
        new = [min(SIZE - 1, max(0, self._pos[0] + dx)), min(SIZE - 1, max(0, self._pos[1] + dy))]
        feedback = "moved" if d in MOVES and new != self._pos else "blocked"
        self._pos = new
        reached = self._pos == self._goal
        self._done = reached or self._state.step_count >= MAX_MOVES
        self._state.log = self._state.log + [f"{self._state.step_count}: {d} -> {new}"]
        return self._obs(1.0 if reached else 0.0, "goal reached" if reached else feedback)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    (x, y), (gx, gy) = observation["position"], observation["goal"]
    if x != gx:
        return {"direction": "right" if gx > x else "left"}
    return {"direction": "down" if gy > y else "up"}


app = create_app(GridEnv, MoveAction, GridObservation, env_name="grid_state_log",
                 max_concurrent_envs=8)
