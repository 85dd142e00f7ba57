"""Counting problems ('how many integers in [1, N] are divisible by a or b?'), integer answer.
Partial credit for near misses: reward = max(0, 1 - |log10(guess / truth)|)."""
import math
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class CountAction(Action):
    count: int = 0


class CountObservation(Observation):
    question: str = ""
    feedback: str = ""


def _truth(n: int, a: int, b: int) -> int:
    lcm = a * b // math.gcd(a, b)
    return n // a + n // b - n // lcm


class InclusionExclusionEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._q: Optional[str] = None
        self._ans = 1
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> CountObservation:
        rng = random.Random(seed)
        n = rng.randint(2000, 6000)
        a, b = rng.sample(range(3, 10), 2)
        self._q = f"How many integers from 1 to {n} inclusive are divisible by {a} or by {b}?"
        self._ans = _truth(n, a, b)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CountObservation(question=self._q)

    def _grade(self, guess: int) -> float:
        if guess <= 0:
            return 0.0
        # partial credit that decays with the order-of-magnitude error
        return round(max(0.0, 1.0 - abs(math.log10(guess / self._ans))), 4)

    def step(self, action: CountAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> CountObservation:
        if self._q is None or self._done:
            return CountObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        r = self._grade(action.count)
        return CountObservation(question=self._q, feedback=f"score {r}", done=True, reward=r)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    """The oracle: inclusion-exclusion."""
    n, a, b = (int(v) for v in re.findall(r"\d+", observation["question"])[1:4])
    return {"count": _truth(n, a, b)}


app = create_app(InclusionExclusionEnv, CountAction, CountObservation, env_name="inclusion_exclusion",
                 max_concurrent_envs=8)
