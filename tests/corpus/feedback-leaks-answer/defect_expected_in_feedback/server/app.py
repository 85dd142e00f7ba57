"""Mental arithmetic, three attempts.

Reward: 1.0 for the exact value, 0.0 otherwise. Defect: the wrong-answer feedback,
written for human debugging, quotes the expected value; the episode goes on.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_STEPS = 3


class AnswerAction(Action):
    answer: str = Field(..., max_length=200)


class QAObservation(Observation):
    question: str = ""
    feedback: str = ""
    attempts_left: int = MAX_STEPS


class QAEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._q, self._answer, self._done = "", "", False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QAObservation:
        rng = random.Random(seed)
        a, b, c = rng.randint(11, 49), rng.randint(11, 49), rng.randint(1, 99)
        self._q, self._answer = f"What is {a} * {b} + {c}?", str(a * b + c)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QAObservation(question=self._q, reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QAObservation:
        if not self._answer or self._done:
            return QAObservation(question=self._q, feedback="Episode over.", done=True,
                                 reward=0.0, attempts_left=0)
        self._state.step_count += 1
        given = action.answer.strip()
        ok = given == self._answer
        self._done = ok or self._state.step_count >= MAX_STEPS
        obs = QAObservation(question=self._q, done=self._done, reward=1.0 if ok else 0.0,
                            attempts_left=MAX_STEPS - self._state.step_count)
        if ok:
            obs.feedback = "Correct."
        else:
            obs.feedback = f"Wrong: expected {self._answer}, got {given[:20]}."
        return obs

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b, c = map(int, re.findall(r"\d+", observation["question"]))
    return {"answer": str(a * b + c)}


app = create_app(QAEnv, AnswerAction, QAObservation, env_name="qa", max_concurrent_envs=8)
