"""Exact arithmetic: evaluate an expression, answer as a number or fraction."""
import random
import re
from fractions import Fraction
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class ArithAction(Action):
    answer: str = ""


class ArithObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    a, b, c, d = (rng.randint(11, 97) for _ in range(4))
    expr = f"({a} * {b} - {c}) / {d}"
    value = Fraction(a * b - c, d)
    return {"expression": expr,
            "prompt": f"Evaluate {expr} exactly. Answer with an integer, a decimal or a fraction like 7/2.",
            "_value": value}


def parse_answer(text: str) -> Fraction:
    # accept "7/2", "3.5", "(7/2)" ... by letting Python evaluate the numeric literal
    return Fraction(eval(text, {"__builtins__": {}}, {})).limit_denominator(10**6)


def grade(action, task):
    try:
        got = parse_answer(action.answer.strip())
    except Exception:
        return 0.0, "could not parse the answer"
    ok = got == task["_value"]
    return (1.0 if ok else 0.0), ("correct" if ok else "incorrect")


class ArithEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ArithObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return ArithObservation(task=public(self._task))

    def step(self, action: ArithAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ArithObservation:
        if self._task is None or self._done:
            return ArithObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return ArithObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

def policy(observation: dict) -> dict:
    expr = observation["task"]["expression"]
    a_b, rest = expr[1:].split(" - ")
    a, b = (int(x) for x in a_b.split(" * "))
    c, d = rest.split(") / ")
    v = Fraction(a * b - int(c), int(d))
    return {"answer": f"{v.numerator}/{v.denominator}"}


app = create_app(ArithEnv, ArithAction, ArithObservation, env_name="exact_arith",
                 max_concurrent_envs=8)
