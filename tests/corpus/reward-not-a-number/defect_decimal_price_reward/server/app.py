"""The price is right: guess an item's price (in cents, 1..9999) with higher/lower hints, 14 guesses.

Reward = closeness 1 - |guess - price| / price, kept exact to the cent with decimal.Decimal.
Defect: the observation types reward as Any (the team's base observation allows "any scalar"), so
the Decimal goes out unconverted and pydantic serialises it as a JSON string ("0.87").
"""
import random
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_GUESSES = 14
CENT = Decimal("0.01")


class PriceAction(Action):
    cents: int = Field(..., ge=1, le=9999)


class PriceObservation(Observation):
    item: str = ""
    low: int = 1
    high: int = 9999
    feedback: str = ""
    reward: Any = None


ITEMS = ["kettle", "desk lamp", "umbrella", "headphones", "backpack", "blender"]


class PriceEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._price: Optional[Decimal] = None
        self._item, self._low, self._high, self._done = "", 1, 9999, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> PriceObservation:
        rng = random.Random(seed)
        self._item = rng.choice(ITEMS)
        self._price = Decimal(rng.randint(100, 9999)) * CENT
        self._low, self._high, self._done = 1, 9999, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return PriceObservation(item=self._item, feedback="Guess the price in cents.")

    def step(self, action: PriceAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> PriceObservation:
        if self._price is None or self._done:
            return PriceObservation(feedback="Call reset() first.", done=True, reward=Decimal(0))
        self._state.step_count += 1
        guess = Decimal(action.cents) * CENT
        closeness = max(Decimal(0), 1 - abs(guess - self._price) / self._price)
        reward = closeness.quantize(CENT, rounding=ROUND_HALF_UP)
        if guess == self._price:
            self._done, text = True, "Exactly right!"
        elif guess < self._price:
            self._low, text = max(self._low, action.cents + 1), "Higher."
        else:
            self._high, text = min(self._high, action.cents - 1), "Lower."
        if not self._done:
            self._done = self._state.step_count >= MAX_GUESSES
        return PriceObservation(item=self._item, low=self._low, high=self._high, feedback=text,
                                done=self._done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"cents": (observation["low"] + observation["high"]) // 2}


app = create_app(PriceEnv, PriceAction, PriceObservation, env_name="price_decimal",
                 max_concurrent_envs=8)
