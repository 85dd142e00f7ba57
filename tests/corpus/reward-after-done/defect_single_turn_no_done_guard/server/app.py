"""Single-turn mental arithmetic: answer a + b.

Defect: step() marks the episode done after the answer but never checks the flag, so a
finished episode grades the same question again and the right answer pays on every step.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class AnswerAction(Action):
    answer: int


class QuestionObservation(Observation):
    question: str = ""
    a: int = 0
    b: int = 0
    feedback: str = ""


class SumEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._a, self._b = 0, 0
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuestionObservation:
        rng = random.Random(seed)
        self._a, self._b = rng.randint(10, 99), rng.randint(10, 99)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QuestionObservation(question=f"What is {self._a} + {self._b}?", a=self._a,
                                   b=self._b, reward=0.0, done=False)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuestionObservation:
        self._state.step_count += 1
        correct = action.answer == self._a + self._b
        self._done = True  # single-turn task: one answer ends the episode
        return QuestionObservation(question=f"What is {self._a} + {self._b}?", a=self._a,
                                   b=self._b, feedback="Correct." if correct else "Wrong.",
                                   reward=1.0 if correct else 0.0, done=self._done)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"answer": int(observation["a"]) + int(observation["b"])}


app = create_app(SumEnv, AnswerAction, QuestionObservation, env_name="sum_no_guard",
                 max_concurrent_envs=8)
