"""Write the number in binary, e.g. 45 -> "101101" (3 attempts).

Defect: the oracle returns the bits as an int (int(bin(n)[2:])), the action field is a str,
and pydantic rejects an int for a str field: the oracle's every step is a validation error.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_ATTEMPTS = 3


class BitsAction(Action):
    bits: str


class BitsObservation(Observation):
    number: int = 0
    feedback: str = ""


class BinaryEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._n, self._done = 0, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> BitsObservation:
        self._n = random.Random(seed).randint(8, 255)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return BitsObservation(number=self._n, feedback="Write it in binary.", reward=0.0)

    def step(self, action: BitsAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> BitsObservation:
        if self._done or not self._n:
            return BitsObservation(feedback="Episode over.", reward=0.0, done=True)
        self._state.step_count += 1
        ok = action.bits.strip().lstrip("0") == format(self._n, "b")
        self._done = ok or self._state.step_count >= MAX_ATTEMPTS
        return BitsObservation(number=self._n, feedback="Right." if ok else "Wrong.",
                               reward=1.0 if ok else 0.0, done=self._done)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"bits": int(bin(int(observation["number"]))[2:])}


app = create_app(BinaryEnv, BitsAction, BitsObservation, env_name="binary_int_oracle",
                 max_concurrent_envs=8)
