"""Twelve additions in a row, one per step.

Every step pays 0.0; the 12th pays 1.0 when all twelve answers were right, else 0.0.
Defect (for training): all-or-nothing at the end of a long episode; an untrained policy
never gets the chain right, so every rollout returns 0.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

ROUNDS = 12


class SumAction(Action):
    answer: str = Field(..., max_length=100)


class SumObservation(Observation):
    question: str = ""
    round: int = 0
    feedback: str = ""


class DrillEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._pairs: list = []
        self._right = 0
        self._done = False

    def _question(self) -> str:
        a, b = self._pairs[self._state.step_count]
        return f"What is {a} + {b}?"

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SumObservation:
        rng = random.Random(seed)
        self._pairs = [(rng.randint(10, 99), rng.randint(10, 99)) for _ in range(ROUNDS)]
        self._right, self._done = 0, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SumObservation(question=self._question(), round=0, reward=0.0)

    def step(self, action: SumAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SumObservation:
        if not self._pairs or self._done:
            return SumObservation(feedback="Episode over.", done=True, reward=0.0)
        a, b = self._pairs[self._state.step_count]
        self._right += action.answer.strip() == str(a + b)
        self._state.step_count += 1
        if self._state.step_count < ROUNDS:
            return SumObservation(question=self._question(), round=self._state.step_count,
                                  feedback="Next.", reward=0.0)
        self._done = True
        perfect = self._right == ROUNDS
        return SumObservation(round=ROUNDS, feedback="Perfect." if perfect else "Not all right.",
                              done=True, reward=1.0 if perfect else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b = map(int, re.findall(r"\d+", observation["question"]))
    return {"answer": str(a + b)}


app = create_app(DrillEnv, SumAction, SumObservation, env_name="drill", max_concurrent_envs=8)
