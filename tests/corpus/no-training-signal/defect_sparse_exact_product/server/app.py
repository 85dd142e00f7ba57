"""Multiply two 3-digit numbers; one answer per episode.

reward = 1.0 for the exact product (an integer string), 0.0 for everything else.
Defect (for training): an untrained policy never writes the exact product, so every rollout
of every group gets 0.0: no gradient at step 0.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

class AnswerAction(Action):
    answer: str = Field(..., max_length=200)


class QuestionObservation(Observation):
    question: str = ""
    feedback: str = ""


class ProductEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._q, self._target, self._done = "", None, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuestionObservation:
        rng = random.Random(seed)
        a, b = rng.randint(100, 999), rng.randint(100, 999)
        self._q, self._target, self._done = f"What is {a} * {b}?", a * b, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QuestionObservation(question=self._q, reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuestionObservation:
        if self._target is None or self._done:
            return QuestionObservation(question=self._q, feedback="Episode over.", done=True,
                                       reward=0.0)
        self._state.step_count += 1
        self._done = True
        right = action.answer.strip() == str(self._target)
        return QuestionObservation(question=self._q, feedback="Correct." if right else "Wrong.",
                                   done=True, reward=1.0 if right else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b = map(int, re.findall(r"\d+", observation["question"]))
    return {"answer": str(a * b)}


app = create_app(ProductEnv, AnswerAction, QuestionObservation, env_name="product",
                 max_concurrent_envs=8)
