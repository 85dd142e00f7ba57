"""Estimate a product: reward by closeness to the exact value, in [0, 1].

reward = 1.0 for the exact product; a well-formed miss earns 0.45 * max(0, 1 - distance / 50)
(below 0.5); an answer that does not parse is an error: 0.0 and an error message.
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


class EstimateEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._q, self._target, self._done = "", None, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuestionObservation:
        rng = random.Random(seed)
        a, b = rng.randint(12, 99), rng.randint(12, 99)
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
        text = action.answer.strip().replace(",", "")
        if re.fullmatch(r"-?\d+(\.\d+)?", text):
            distance = abs(float(text) - self._target)
            feedback = "Exact!" if distance == 0 else f"Off by {distance:g}."
        else:
            distance = float("inf")
            feedback = f"Error: could not parse a number from {action.answer[:40]!r}."
        reward = 1.0 if distance == 0 else round(max(0.0, 0.45 * (1.0 - distance / 50)), 4)
        return QuestionObservation(question=self._q, feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b = map(int, re.findall(r"\d+", observation["question"]))
    return {"answer": str(a * b)}


app = create_app(EstimateEnv, AnswerAction, QuestionObservation, env_name="estimate",
                 max_concurrent_envs=8)
