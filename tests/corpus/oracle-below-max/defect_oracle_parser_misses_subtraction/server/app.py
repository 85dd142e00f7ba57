"""Arithmetic in words: "What is 37 + 12?" (also - and *), 3 attempts, 1.0 for the answer.

Defect: the oracle below was written when only additions existed; its regex does not match
the other operators, so it raises on every seed that draws '-' or '*'.
"""
import operator
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul}
MAX_ATTEMPTS = 3


class AnswerAction(Action):
    answer: int


class ArithObservation(Observation):
    question: str = ""
    feedback: str = ""


class ArithEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._question, self._value, self._done = "", None, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ArithObservation:
        rng = random.Random(seed)
        a, b, op = rng.randint(10, 60), rng.randint(2, 30), rng.choice(sorted(OPS))
        self._question, self._value = f"What is {a} {op} {b}?", OPS[op](a, b)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return ArithObservation(question=self._question, feedback="Answer it.", reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ArithObservation:
        if self._done or self._value is None:
            return ArithObservation(feedback="Episode over.", reward=0.0, done=True)
        self._state.step_count += 1
        ok = action.answer == self._value
        self._done = ok or self._state.step_count >= MAX_ATTEMPTS
        return ArithObservation(question=self._question, feedback="Right." if ok else "Wrong.",
                                reward=1.0 if ok else 0.0, done=self._done)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b = re.match(r"What is (\d+) \+ (\d+)\?", observation["question"]).groups()
    return {"answer": int(a) + int(b)}


app = create_app(ArithEnv, AnswerAction, ArithObservation, env_name="arith_oracle_plus_only",
                 max_concurrent_envs=8)
