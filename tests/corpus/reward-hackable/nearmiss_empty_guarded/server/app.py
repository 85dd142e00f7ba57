"""Arithmetic QA with lenient number matching; empty answers and unreset instances pay 0."""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class QAAction(Action):
    answer: str = ""


class QAObservation(Observation):
    question: str = ""
    feedback: str = ""


def last_number(text: str) -> Optional[float]:
    found = re.findall(r"-?\d+(?:\.\d+)?", text.replace(",", ""))
    return float(found[-1]) if found else None


class ArithmeticEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._question = ""
        self._expected: Optional[int] = None  # None until reset(): nothing can match it
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QAObservation:
        rng = random.Random(seed)
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        self._question, self._expected = f"What is {a} + {b}?", a + b
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QAObservation(question=self._question)

    def step(self, action: QAAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QAObservation:
        if self._expected is None or self._done:
            return QAObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        given = last_number(action.answer)
        correct = given is not None and given == self._expected
        return QAObservation(question=self._question,
                             feedback="Correct." if correct else "Incorrect.",
                             done=True, reward=1.0 if correct else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b = map(int, re.findall(r"\d+", observation["question"]))
    return {"answer": str(a + b)}


app = create_app(ArithmeticEnv, QAAction, QAObservation, env_name="arith_guarded",
                 max_concurrent_envs=8)
