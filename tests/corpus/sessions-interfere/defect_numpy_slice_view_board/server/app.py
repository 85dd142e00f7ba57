"""Switch off the lights: a 3x3 board of lamps, pressing a cell toggles it, 8 presses.

Defect: reset() starts from `self._grid = BLANK[:]`, written as if slicing copied (as it does
for a list), then fills in the seed's lamps. For a numpy array the slice is a view, so every
session's board is the same module-level buffer: each reset refills it with its own seed's
lamps and each step toggles a lamp on everyone's board. Alone, reset fully rewrites the buffer,
so each episode replays exactly.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

import numpy as np
from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

SIZE = 9
MAX_PRESSES = 8
BLANK = np.zeros(SIZE, dtype=np.int8)


class PressAction(Action):
    cell: int = Field(..., ge=0, lt=SIZE)


class LightsObservation(Observation):
    lights: List[int] = Field(default_factory=list)
    presses_left: int = MAX_PRESSES
    feedback: str = ""


class LightsEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._grid: Optional[np.ndarray] = None
        self._presses, self._done = 0, True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> LightsObservation:
        rng = random.Random(seed)
        self._grid = BLANK[:]  # "fresh board"
        self._grid[:] = 0
        self._grid[rng.sample(range(SIZE), rng.randint(3, 6))] = 1
        self._presses, self._done = 0, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs("Switch every lamp off.", 0.0)

    def step(self, action: PressAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> LightsObservation:
        if self._grid is None or self._done:
            return LightsObservation(feedback="Episode is over; call reset().", done=True,
                                     reward=0.0)
        self._state.step_count += 1
        self._presses += 1
        self._grid[action.cell] ^= 1
        if not self._grid.any():
            self._done = True
            return self._obs("All lamps are off!", 1.0)
        self._done = self._presses >= MAX_PRESSES
        lit = int(self._grid.sum())
        return self._obs(f"{lit} lamp(s) still on." + (" Out of presses." if self._done else ""),
                         0.0)

    def _obs(self, text: str, reward: float) -> LightsObservation:
        return LightsObservation(lights=[int(v) for v in self._grid],
                                 presses_left=MAX_PRESSES - self._presses, feedback=text,
                                 done=self._done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    lights = observation.get("lights") or [0]
    return {"cell": next((i for i, v in enumerate(lights) if v), 0)}


app = create_app(LightsEnv, PressAction, LightsObservation, env_name="lights_numpy_view",
                 max_concurrent_envs=8)
