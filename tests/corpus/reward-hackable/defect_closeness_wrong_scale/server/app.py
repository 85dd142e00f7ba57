"""Mental multiplication with partial credit for close answers.

Defect: closeness is normalised by MAX_GUESS (the action's bound, 10000), not by the size of
the product (at most 900): every guess of 0 is "within 9%" and earns at least 0.91.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_GUESS = 10000


class EstimateAction(Action):
    guess: int = Field(..., ge=0, le=MAX_GUESS)


class EstimateObservation(Observation):
    question: str = ""
    feedback: str = ""


class EstimateEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._question = ""
        self._target: Optional[int] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> EstimateObservation:
        rng = random.Random(seed)
        a, b = rng.randint(2, 30), rng.randint(2, 30)
        self._target, self._question = a * b, f"What is {a} * {b}?"
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return EstimateObservation(question=self._question)

    def step(self, action: EstimateAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> EstimateObservation:
        if self._target is None or self._done:
            return EstimateObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward = max(0.0, 1.0 - abs(action.guess - self._target) / MAX_GUESS)
        return EstimateObservation(question=self._question, feedback=f"Score {reward:.3f}.",
                                   done=True, reward=round(reward, 4))

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b = map(int, re.findall(r"\d+", observation["question"]))
    return {"guess": a * b}


app = create_app(EstimateEnv, EstimateAction, EstimateObservation, env_name="estimate",
                 max_concurrent_envs=8)
