"""Unit-conversion word problems; answer is a number, graded to 0.01 relative tolerance."""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

FACTORS = {("miles", "km"): 1.609344, ("pounds", "kg"): 0.45359237, ("gallons", "litres"): 3.785411784,
           ("feet", "metres"): 0.3048, ("ounces", "grams"): 28.349523125}


def make_record(rng: random.Random) -> dict:
    (src, dst), f = rng.choice(sorted(FACTORS.items()))
    q = rng.randint(2, 900)
    return {"id": f"conv-{rng.randint(1000, 9999)}", "question": f"A crate weighs/measures {q} {src}. How many {dst} is that?",
            "quantity": q, "from": src, "to": dst, "answer": round(q * f, 3)}


class NumAction(Action):
    value: float = 0.0


class ConvObservation(Observation):
    task: dict = {}
    feedback: str = ""


class ConvEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._rec: Optional[dict] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> ConvObservation:
        self._rec = make_record(random.Random(seed))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return ConvObservation(task=dict(self._rec))

    def step(self, action: NumAction, timeout_s: Optional[float] = None, **kwargs: Any) -> ConvObservation:
        if self._rec is None or self._done:
            return ConvObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        want = self._rec["answer"]
        ok = abs(action.value - want) <= 0.01 * abs(want)
        return ConvObservation(feedback="Correct." if ok else "Incorrect.", done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    t = observation["task"]
    return {"value": t["quantity"] * FACTORS[(t["from"], t["to"])]}


app = create_app(ConvEnv, NumAction, ConvObservation, env_name="unitconv", max_concurrent_envs=8)
