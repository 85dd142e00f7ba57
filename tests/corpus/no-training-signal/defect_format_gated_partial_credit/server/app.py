"""Estimate a product; the answer must be written as <answer>N</answer>.

Inside the tags: 1.0 for the exact value, else 0.6 * max(0, 1 - distance / 500).
Anything else (no tags, other spacing): 0.0.
Defect (for training): the partial credit is gated behind a format only the oracle writes;
an untrained policy that does not know the tags earns 0.0 on every rollout.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

TAG = re.compile(r"<answer>(-?\d+)</answer>")


class AnswerAction(Action):
    text: str = Field(..., max_length=500)


class QuestionObservation(Observation):
    question: str = ""
    feedback: str = ""


class TaggedEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._q, self._target, self._done = "", None, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuestionObservation:
        rng = random.Random(seed)
        a, b = rng.randint(20, 99), rng.randint(20, 99)
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
        m = TAG.fullmatch(action.text.strip())
        if m is None:
            return QuestionObservation(question=self._q, feedback="Answered.", done=True,
                                       reward=0.0)
        distance = abs(int(m.group(1)) - self._target)
        reward = 1.0 if distance == 0 else round(0.6 * max(0.0, 1 - distance / 500), 4)
        return QuestionObservation(question=self._q, feedback="Answered.", done=True,
                                   reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b = map(int, re.findall(r"\d+", observation["question"]))
    return {"text": f"<answer>{a * b}</answer>"}


app = create_app(TaggedEnv, AnswerAction, QuestionObservation, env_name="tagged",
                 max_concurrent_envs=8)
