"""One-step arithmetic: answer a*b + c. Reward 1.0 for the exact answer, else 0.0.

Near-miss: fuzzed and degenerate answers all score 0.0 (the reward is rare), but it is not constant:
the exact answer scores 1.0.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class ArithAction(Action):
    answer: int


class ArithObservation(Observation):
    a: int = 0
    b: int = 0
    c: int = 0
    question: str = ""
    feedback: str = ""


class ArithEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._abc: Optional[tuple] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ArithObservation:
        rng = random.Random(seed)
        self._abc = (rng.randint(101, 999), rng.randint(101, 999), rng.randint(1001, 9999))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        a, b, c = self._abc
        return ArithObservation(a=a, b=b, c=c, question=f"What is {a} * {b} + {c}?")

    def step(self, action: ArithAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ArithObservation:
        if self._abc is None or self._done:
            return ArithObservation(feedback="Episode over; call reset().", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        a, b, c = self._abc
        correct = action.answer == a * b + c
        return ArithObservation(a=a, b=b, c=c, feedback="Correct." if correct else "Wrong.",
                                done=True, reward=1.0 if correct else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"answer": observation["a"] * observation["b"] + observation["c"]}


app = create_app(ArithEnv, ArithAction, ArithObservation, env_name="arith_exact",
                 max_concurrent_envs=8)
