"""Shopping bill totals in dollars; one attempt.
The verifier takes the last number in the reply (lead-ins, '$' and spaces are fine).
Defect: it compares that number as a STRING with f"{total:.2f}", so 12.5 or 12.500 is wrong for 12.50."""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PRICES = {"bread": 250, "milk": 120, "eggs": 310, "apples": 180, "cheese": 475, "coffee": 690}  # cents


class AnswerAction(Action):
    answer: str = Field(..., max_length=300)


class BillObservation(Observation):
    problem: str = ""
    feedback: str = ""


class BillEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._total: Optional[str] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> BillObservation:
        rng = random.Random(seed)
        items = {k: rng.randint(1, 4) for k in rng.sample(sorted(PRICES), 3)}
        self._total = f"{sum(PRICES[k] * n for k, n in items.items()) / 100:.2f}"
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        listing = ", ".join(f"{n} x {k} at ${PRICES[k] / 100:.2f}" for k, n in items.items())
        return BillObservation(problem=f"You buy {listing}. What is the total in dollars?", reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> BillObservation:
        if self._total is None:
            return BillObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        nums = re.findall(r"\d+(?:\.\d+)?", action.answer)
        ok = bool(nums) and nums[-1] == self._total
        self._total = None
        return BillObservation(feedback="Correct." if ok else "Incorrect.", done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    cents = 0
    for n, item, price in re.findall(r"(\d+) x (\w+) at \$(\d+\.\d\d)", observation["problem"]):
        cents += int(n) * round(float(price) * 100)
    return {"answer": f"{cents / 100:.2f}"}


app = create_app(BillEnv, AnswerAction, BillObservation, env_name="bill", max_concurrent_envs=8)
