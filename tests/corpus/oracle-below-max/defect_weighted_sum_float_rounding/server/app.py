"""Unit conversion: "Convert 3.5 km to m", answer as "<number> <unit>" (3 attempts).
Reward = 0.7 * value right + 0.2 * unit right + 0.1 * format right.

Defect: the parts are summed in floating point as 0.7 + 0.2 + 0.1, which is
0.9999999999999999, so a perfect answer never reaches hi = 1.0 (oracle_tolerance 0.0).
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

CONVERSIONS = [("km", "m", 1000), ("kg", "g", 1000), ("m", "cm", 100), ("h", "min", 60),
               ("l", "ml", 1000), ("min", "s", 60)]
WEIGHTS = {"value": 0.7, "unit": 0.2, "format": 0.1}
MAX_ATTEMPTS = 3


class ConvertAction(Action):
    answer: str


class ConvertObservation(Observation):
    question: str = ""
    feedback: str = ""


class ConvertEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._question, self._value, self._unit, self._done = "", None, "", False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ConvertObservation:
        rng = random.Random(seed)
        src, dst, factor = rng.choice(CONVERSIONS)
        x = rng.randint(2, 90) / 2
        self._question = f"Convert {x:g} {src} to {dst}"
        self._value, self._unit, self._done = x * factor, dst, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return ConvertObservation(question=self._question, feedback="Answer '<n> <unit>'.",
                                  reward=0.0)

    def _score(self, answer: str) -> float:
        m = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s+([a-z]+)\s*", answer)
        parts = {"format": m is not None,
                 "unit": bool(m) and m.group(2) == self._unit,
                 "value": bool(m) and abs(float(m.group(1)) - self._value) < 1e-9}
        return sum(WEIGHTS[k] for k in ("value", "unit", "format") if parts[k])

    def step(self, action: ConvertAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ConvertObservation:
        if self._done or self._value is None:
            return ConvertObservation(feedback="Episode over.", reward=0.0, done=True)
        self._state.step_count += 1
        score = self._score(action.answer)
        self._done = score > 0.99 or self._state.step_count >= MAX_ATTEMPTS
        if not self._done:
            score = 0.0  # partial credit only on the last attempt
        return ConvertObservation(question=self._question, feedback=f"Score {score:.2f}.",
                                  reward=score, done=self._done)

    @property
    def state(self) -> State:
        return self._state


_FACTORS = {(s, d): f for s, d, f in CONVERSIONS}


def policy(observation: dict) -> dict:
    _, x, src, _, dst = observation["question"].split()
    return {"answer": f"{float(x) * _FACTORS[(src, dst)]:g} {dst}"}


app = create_app(ConvertEnv, ConvertAction, ConvertObservation, env_name="convert_weighted",
                 max_concurrent_envs=8)
