"""Recover the 3 weights of a noiseless linear model from the shown (x, y) samples; reward
1.0 for an exact fit (within 1e-6), else 0, with closeness credit on the last of 4 tries.

Defect: the hidden weights are np.zeros(3) until reset and the async step has no
before-reset guard, so a never-reset instance scores the zero vector as exact.
"""
from typing import Any, List, Optional
from uuid import uuid4

import numpy as np

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_TRIES = 4


class WeightsAction(Action):
    w: List[float] = [0.0, 0.0, 0.0]


class FitObservation(Observation):
    xs: List[List[float]] = []
    ys: List[float] = []
    feedback: str = ""


class FitEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._w = np.zeros(3)
        self._x = np.zeros((0, 3))
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> FitObservation:
        rs = np.random.RandomState(seed)
        self._w = rs.randint(-5, 6, size=3).astype(float)
        self._x = rs.randint(-3, 4, size=(5, 3)).astype(float)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs("Find w with y = x . w", 0.0)

    def _obs(self, text: str, reward: float) -> FitObservation:
        return FitObservation(xs=self._x.tolist(), ys=(self._x @ self._w).tolist(),
                              feedback=text, reward=reward, done=self._done)

    def step(self, action: WeightsAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> FitObservation:
        raise NotImplementedError("served through step_async")

    async def step_async(self, action: WeightsAction, timeout_s: Optional[float] = None,
                         **kwargs: Any) -> FitObservation:
        if self._done:
            return self._obs("Episode over.", 0.0)
        self._state.step_count += 1
        guess = np.asarray((list(action.w) + [0.0, 0.0, 0.0])[:3], dtype=float)
        err = float(np.linalg.norm(guess - self._w))
        exact = err < 1e-6
        self._done = exact or self._state.step_count >= MAX_TRIES
        reward = 1.0 if exact else 0.0
        if not exact and self._done:
            reward = round(0.4 / (1.0 + err), 4)
        return self._obs("Exact fit." if exact else f"Residual {err:.2f}.", reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    x, y = np.array(observation["xs"]), np.array(observation["ys"])
    w, *_ = np.linalg.lstsq(x, y, rcond=None)
    return {"w": [round(float(v), 6) for v in w]}


app = create_app(FitEnv, WeightsAction, FitObservation, env_name="fit_zero_weights",
                 max_concurrent_envs=8)
