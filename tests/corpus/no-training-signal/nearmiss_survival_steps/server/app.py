"""Keep a pole upright for 10 steps by pushing left (0) or right (1).

The pole's tilt starts from the seed and drifts; a push moves it by 1 toward its side.
Each step survived pays 0.1; surviving the 10th step pays 1.0; a fall ends the episode.
Not a defect: how long a policy survives depends on its pushes, so returns differ.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

class PushAction(Action):
    push: int = Field(..., ge=0, le=1)


class PoleObservation(Observation):
    tilt: int = 0
    drift: int = 0
    steps: int = 0


class PoleEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._tilt, self._drift, self._done, self._started = 0, 1, False, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> PoleObservation:
        rng = random.Random(seed)
        self._tilt, self._drift = rng.randint(-1, 1), rng.choice([-1, 1])
        self._done, self._started = False, True
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return PoleObservation(tilt=self._tilt, drift=self._drift, reward=0.0)

    def step(self, action: PushAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> PoleObservation:
        if not self._started or self._done:
            return PoleObservation(tilt=self._tilt, done=True, reward=0.0)
        self._state.step_count += 1
        n = self._state.step_count
        self._tilt += self._drift + (1 if action.push == 1 else -1)
        if n % 3 == 0:
            self._drift = -self._drift
        fell = abs(self._tilt) > 3
        self._done = fell or n >= 10
        reward = 0.0 if fell else (1.0 if n >= 10 else 0.1)
        return PoleObservation(tilt=self._tilt, drift=self._drift, steps=n, done=self._done,
                               reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    nxt = observation["tilt"] + observation["drift"]
    return {"push": 0 if nxt > 0 else 1}


app = create_app(PoleEnv, PushAction, PoleObservation, env_name="pole", max_concurrent_envs=8)
