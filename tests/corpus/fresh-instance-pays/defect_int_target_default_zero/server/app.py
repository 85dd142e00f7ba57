"""Estimate how many dots (0..500) the seeded picture has; reward = closeness, 4 tries.

Defect: `self._count = 0` until reset, and the score is 1 - |guess - count| / 500, so on a
never-reset instance the minimum guess 0 is a perfect estimate.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_TRIES, HIGH = 4, 500


class EstimateAction(Action):
    guess: int = 0


class DotsObservation(Observation):
    rows: int = 0
    cols: int = 0
    missing: int = 0
    feedback: str = ""


class DotsEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._count = 0
        self._rows = self._cols = self._missing = 0
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> DotsObservation:
        rng = random.Random(seed)
        self._rows, self._cols = rng.randint(5, 20), rng.randint(5, 20)
        self._missing = rng.randint(1, 4)
        self._count = self._rows * self._cols - self._missing
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs("How many dots?", 0.0)

    def _obs(self, text: str, reward: float) -> DotsObservation:
        return DotsObservation(rows=self._rows, cols=self._cols, missing=self._missing,
                               feedback=text, reward=reward, done=self._done)

    def step(self, action: EstimateAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> DotsObservation:
        if self._done:
            return self._obs("Episode over.", 0.0)
        self._state.step_count += 1
        err = abs(action.guess - self._count)
        reward = 1.0 if err == 0 else 0.0
        if self._state.step_count >= MAX_TRIES and err:
            reward = round(0.4 * max(0.0, 1 - err / HIGH), 4)  # closeness on the last try
        self._done = err == 0 or self._state.step_count >= MAX_TRIES
        return self._obs("Exact!" if err == 0 else "Not quite.", reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"guess": observation["rows"] * observation["cols"] - observation["missing"]}


app = create_app(DotsEnv, EstimateAction, DotsObservation, env_name="dots_zero_default",
                 max_concurrent_envs=8)
