"""Walk a corridor of 10 cells (start at 0) to a goal cell. Moves: left / right / stay.

Near-miss: every step before the goal pays 0.0 and reaching the goal pays 1.0 (sparse, not constant).
"""
import random
from typing import Any, Literal, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

LENGTH, MAX_MOVES = 10, 12


class MoveAction(Action):
    move: Literal["left", "right", "stay"]


class CorridorObservation(Observation):
    position: int = 0
    goal: int = 0
    feedback: str = ""


class CorridorEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._goal: Optional[int] = None
        self._pos, self._done = 0, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> CorridorObservation:
        self._goal = random.Random(seed).randint(4, LENGTH - 1)
        self._pos, self._done = 0, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CorridorObservation(position=0, goal=self._goal, feedback="Reach the goal cell.")

    def step(self, action: MoveAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> CorridorObservation:
        if self._goal is None or self._done:
            return CorridorObservation(feedback="Episode over; call reset().", done=True, reward=0.0)
        self._state.step_count += 1
        self._pos = min(LENGTH - 1, max(0, self._pos + {"left": -1, "right": 1, "stay": 0}[action.move]))
        reached = self._pos == self._goal
        self._done = reached or self._state.step_count >= MAX_MOVES
        return CorridorObservation(position=self._pos, goal=self._goal, done=self._done,
                                   feedback="Goal!" if reached else "Keep going.",
                                   reward=1.0 if reached else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"move": "right" if observation["position"] < observation["goal"] else "left"}


app = create_app(CorridorEnv, MoveAction, CorridorObservation, env_name="corridor_sparse",
                 max_concurrent_envs=8)
