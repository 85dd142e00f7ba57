"""Unit conversion with a structured answer {value, unit}; one step.
Reward: 0.5 if unit matches + 0.5 if value within 1%. Defect: the unit is copied from the question."""
import random
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

CONVERSIONS = [("mi", "km", 1.609344), ("lb", "kg", 0.45359237), ("ft", "m", 0.3048),
               ("gal", "L", 3.785411784), ("in", "cm", 2.54), ("oz", "g", 28.349523125)]


class ConversionAction(Action):
    value: float = Field(..., ge=-1e9, le=1e9)
    unit: str = Field(..., max_length=10)


class ConversionObservation(Observation):
    question: str = ""
    quantity: float = 0.0
    from_unit: str = ""
    to_unit: str = ""
    feedback: str = ""


class ConversionEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target: Optional[tuple] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ConversionObservation:
        rng = random.Random(seed)
        src, dst, factor = rng.choice(CONVERSIONS)
        qty = rng.randint(2, 500)
        self._target = (round(qty * factor, 3), dst)
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return ConversionObservation(question=f"Convert {qty} {src} to {dst}.", quantity=qty, from_unit=src,
                                     to_unit=dst, reward=0.0)

    def step(self, action: ConversionAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ConversionObservation:
        if self._target is None:
            return ConversionObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        value, unit = self._target
        r = 0.5 * (action.unit.strip() == unit) + 0.5 * (abs(action.value - value) <= 0.01 * abs(value))
        self._target = None
        return ConversionObservation(feedback=f"score {r}", done=True, reward=r)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    factor = next(f for s, d, f in CONVERSIONS if s == observation["from_unit"])
    return {"value": round(observation["quantity"] * factor, 3), "unit": observation["to_unit"]}


app = create_app(ConversionEnv, ConversionAction, ConversionObservation, env_name="units", max_concurrent_envs=8)
