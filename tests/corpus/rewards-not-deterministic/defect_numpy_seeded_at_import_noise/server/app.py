"""Reach a target sum: each step adds 1..9 to a running total; land exactly on the target.

Defect: the shaped reward adds 'robustness' noise from numpy's global RNG, seeded once at import.
The author believes np.random.seed(42) makes it reproducible, but the stream advances with every
step of every episode in the process, so the same seed and actions get different rewards.
"""
from typing import Any, Optional
from uuid import uuid4

import numpy as np
from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

np.random.seed(42)  # "for reproducibility"
MAX_STEPS = 10


class AddAction(Action):
    add: int = Field(..., ge=1, le=9)


class SumObservation(Observation):
    total: int = 0
    target: int = 0
    feedback: str = ""


class SumEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target, self._total, self._done = 0, 0, True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SumObservation:
        self._target = int(np.random.default_rng(seed).integers(20, 60))
        self._total, self._done = 0, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SumObservation(total=0, target=self._target, feedback="Add 1..9.", reward=0.0)

    def step(self, action: AddAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SumObservation:
        if self._done:
            return SumObservation(total=self._total, target=self._target,
                                  feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        self._total += action.add
        if self._total == self._target:
            self._done, reward, text = True, 1.0, "Exactly on target!"
        elif self._total > self._target:
            self._done, reward, text = True, 0.0, "Overshot."
        else:
            self._done = self._state.step_count >= MAX_STEPS
            closeness = self._total / self._target
            noise = float(np.random.normal(0.0, 0.02))
            reward = float(np.clip(0.1 * closeness + noise, 0.0, 0.2))
            text = "Keep going."
        return SumObservation(total=self._total, target=self._target, feedback=text,
                              done=self._done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"add": max(1, min(9, observation["target"] - observation["total"]))}


app = create_app(SumEnv, AddAction, SumObservation, env_name="target_sum_noise",
                 max_concurrent_envs=8)
