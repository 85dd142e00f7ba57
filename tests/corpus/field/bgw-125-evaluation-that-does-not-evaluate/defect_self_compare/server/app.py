"""Unit conversion: convert a length between metric units."""
import math
import random
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class UnitsAction(Action):
    answer: str = ""


class UnitsObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

UNITS = {"km": 1000.0, "m": 1.0, "cm": 0.01, "mm": 0.001}


def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    src, dst = rng.sample(sorted(UNITS), 2)
    qty = rng.randint(2, 900)
    answer = qty * UNITS[src] / UNITS[dst]
    return {"prompt": f"Convert {qty} {src} to {dst}. Give just the number.",
            "quantity": qty, "from": src, "to": dst, "_answer": answer}


def to_number(text: str) -> Optional[float]:
    try:
        return float(text.strip().replace(",", ""))
    except ValueError:
        return None


def grade(action, task):
    submitted = to_number(action.answer)
    if submitted is None and action.answer.strip():
        return 0.0, "not a number"
    expected = task["_answer"]
    ok = math.isclose(expected, task["_answer"], rel_tol=1e-9)
    return (1.0 if ok else 0.0), ("correct" if ok else f"expected {expected}")


class UnitsEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> UnitsObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return UnitsObservation(task=public(self._task))

    def step(self, action: UnitsAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> UnitsObservation:
        if self._task is None or self._done:
            return UnitsObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return UnitsObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

def policy(observation: dict) -> dict:
    t = observation["task"]
    return {"answer": repr(t["quantity"] * UNITS[t["from"]] / UNITS[t["to"]])}


app = create_app(UnitsEnv, UnitsAction, UnitsObservation, env_name="unit_convert",
                 max_concurrent_envs=8)
