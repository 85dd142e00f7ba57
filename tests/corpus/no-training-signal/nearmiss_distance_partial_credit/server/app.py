"""What is a * b (at most 100)? One integer answer, scored by closeness.

reward = 1 - |guess - target| / 100, clamped to [0, 1]; 1.0 for the exact value.
Not a defect: every guess earns something, and different guesses earn different amounts.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

class GuessAction(Action):
    guess: int = Field(..., ge=0, le=100)


class QuestionObservation(Observation):
    question: str = ""
    feedback: str = ""


class CloseEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._q, self._target, self._done = "", None, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuestionObservation:
        rng = random.Random(seed)
        a, b = rng.randint(2, 10), rng.randint(2, 10)
        self._q, self._target, self._done = f"What is {a} * {b}?", a * b, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QuestionObservation(question=self._q, reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuestionObservation:
        if self._target is None or self._done:
            return QuestionObservation(question=self._q, feedback="Episode over.", done=True,
                                       reward=0.0)
        self._state.step_count += 1
        self._done = True
        distance = abs(action.guess - self._target)
        reward = round(max(0.0, 1 - distance / 100), 4)
        return QuestionObservation(question=self._q, feedback=f"Scored {reward}.", done=True,
                                   reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b = map(int, re.findall(r"\d+", observation["question"]))
    return {"guess": a * b}


app = create_app(CloseEnv, GuessAction, QuestionObservation, env_name="close",
                 max_concurrent_envs=8)
