"""Decode the 6-digit PIN from the clues (3 attempts); only the exact PIN pays 1.0.

Near-miss: a sparse reward. Almost every action gets 0.0 at any seed and step, but the
reward is computed from the action: the right PIN gets 1.0.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_ATTEMPTS = 3


class PinAction(Action):
    pin: str


class PinObservation(Observation):
    clues: List[str] = []
    feedback: str = ""


class PinEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._digits: List[int] = []
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> PinObservation:
        rng = random.Random(seed)
        self._digits = [rng.randint(0, 9) for _ in range(6)]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return PinObservation(clues=self._clues(), feedback="Enter the PIN.", reward=0.0)

    def _clues(self) -> List[str]:  # digit i is (a + b) mod 10
        out = []
        for i, d in enumerate(self._digits):
            a = (d * 7 + i * 3) % 10
            out.append(f"digit {i + 1} = ({a} + {(d - a) % 10}) mod 10")
        return out

    def step(self, action: PinAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> PinObservation:
        if self._done or not self._digits:
            return PinObservation(feedback="Episode over.", reward=0.0, done=True)
        self._state.step_count += 1
        ok = action.pin.strip() == "".join(map(str, self._digits))
        self._done = ok or self._state.step_count >= MAX_ATTEMPTS
        return PinObservation(clues=self._clues(), feedback="Unlocked." if ok else "Wrong PIN.",
                              reward=1.0 if ok else 0.0, done=self._done)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    pin = ""
    for clue in observation["clues"]:
        a, b = clue.split("(")[1].split(")")[0].split(" + ")
        pin += str((int(a) + int(b)) % 10)
    return {"pin": pin}


app = create_app(PinEnv, PinAction, PinObservation, env_name="pin_sparse",
                 max_concurrent_envs=8)
