"""Single-turn mental arithmetic (a * b).

Near-miss: a step after done repeats the episode's result for dashboards (final_score = 1.0
in the observation and in metadata), which looks like paying again, but its reward is 0.0.
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
    final_score: float = 0.0


class MulEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._a = self._b = 0
        self._ready, self._done, self._score = False, False, 0.0

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuestionObservation:
        rng = random.Random(seed)
        self._a, self._b = rng.randint(3, 19), rng.randint(3, 19)
        self._ready, self._done, self._score = True, False, 0.0
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QuestionObservation(question=f"What is {self._a} * {self._b}?", a=self._a,
                                   b=self._b, reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuestionObservation:
        if not self._ready:
            return QuestionObservation(feedback="Call reset() first.", reward=0.0, done=True)
        if self._done:
            return QuestionObservation(question=f"What is {self._a} * {self._b}?", a=self._a,
                                       b=self._b, feedback="Episode over: call reset().",
                                       final_score=self._score, reward=0.0, done=True,
                                       metadata={"final_score": self._score})
        self._state.step_count += 1
        self._score = 1.0 if action.answer == self._a * self._b else 0.0
        self._done = True
        return QuestionObservation(question=f"What is {self._a} * {self._b}?", a=self._a,
                                   b=self._b, feedback="Correct." if self._score else "Wrong.",
                                   final_score=self._score, reward=self._score, done=True)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"answer": int(observation["a"]) * int(observation["b"])}


app = create_app(MulEnv, AnswerAction, QuestionObservation, env_name="mul_final_score",
                 max_concurrent_envs=8)
