"""List every divisor of n (single step). Reward = F1 in percent (0..100), as on the leaderboard.

Defect: the reward is a percentage (0..100) while the manifest declares [0, 1].
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

import numpy as np
from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class DivisorsAction(Action):
    numbers: List[int] = Field(default_factory=list, max_length=64)


class DivisorsObservation(Observation):
    n: int = 0
    feedback: str = ""


def divisors(n: int) -> List[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


class DivisorsEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._n: Optional[int] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> DivisorsObservation:
        self._n = random.Random(seed).randint(12, 120)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return DivisorsObservation(n=self._n, feedback="List every divisor of n.")

    def step(self, action: DivisorsAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> DivisorsObservation:
        if self._n is None or self._done:
            return DivisorsObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        truth = set(divisors(self._n))
        answer = set(action.numbers)
        precision = float(np.mean([x in truth for x in answer])) if answer else None
        recall = len(answer & truth) / len(truth)
        p = precision or 0.0
        f1 = 2 * p * recall / (p + recall) if p + recall else 0.0
        reward = round(100.0 * f1, 1)
        return DivisorsObservation(n=self._n, feedback=f"{len(answer & truth)} of {len(truth)} found.",
                                   done=True, reward=reward,
                                   metadata={"precision": precision, "recall": recall})

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"numbers": divisors(observation["n"])}


app = create_app(DivisorsEnv, DivisorsAction, DivisorsObservation, env_name="divisors_percent",
                 max_concurrent_envs=8)
