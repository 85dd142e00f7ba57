"""Combine the given numbers with + - * / into an expression equal to the target.

Three attempts. Reward: 1.0 when the expression uses exactly the given numbers and equals
the target, 0.0 for a valid expression with another value. Defect: any exception while
checking (bad syntax, division by zero, a name or number not allowed) is caught and paid
a "neutral" 0.5 "so the policy is not punished for exploring"; the error is in `error`.
"""
import ast
import random
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_STEPS = 3
OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
       ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b}


class ExprAction(Action):
    expression: str = Field(..., max_length=200)


class PuzzleObservation(Observation):
    numbers: List[int] = Field(default_factory=list)
    target: int = 0
    value: Optional[float] = None
    error: str = ""
    attempts_left: int = MAX_STEPS


def evaluate(node, used: List[int]) -> float:
    if isinstance(node, ast.Expression):
        return evaluate(node.body, used)
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        return OPS[type(node.op)](evaluate(node.left, used), evaluate(node.right, used))
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        used.append(node.value)
        return node.value
    raise ValueError(f"not allowed: {ast.dump(node)[:60]}")


class PuzzleEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._nums: List[int] = []
        self._target, self._done = 0, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> PuzzleObservation:
        rng = random.Random(seed)
        self._nums = [rng.randint(2, 9) for _ in range(3)]
        a, b, c = self._nums
        self._target, self._done = a * b + c, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return PuzzleObservation(numbers=list(self._nums), target=self._target, reward=0.0)

    def step(self, action: ExprAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> PuzzleObservation:
        if not self._nums or self._done:
            return PuzzleObservation(numbers=self._nums, target=self._target, done=True,
                                     reward=0.0, attempts_left=0)
        self._state.step_count += 1
        value, error = None, ""
        try:
            used: List[int] = []
            value = evaluate(ast.parse(action.expression, mode="eval"), used)
            if sorted(used) != sorted(self._nums):
                raise ValueError(f"use exactly the numbers {self._nums}")
            reward = 1.0 if abs(value - self._target) < 1e-9 else 0.0
        except Exception as exc:  # noqa: BLE001 - "neutral" reward for broken attempts
            error, reward = f"{type(exc).__name__}: {exc}", 0.5
        self._done = reward == 1.0 or self._state.step_count >= MAX_STEPS
        return PuzzleObservation(numbers=list(self._nums), target=self._target, value=value,
                                 error=error, done=self._done, reward=reward,
                                 attempts_left=MAX_STEPS - self._state.step_count)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b, c = observation["numbers"]
    return {"expression": f"{a} * {b} + {c}"}


app = create_app(PuzzleEnv, ExprAction, PuzzleObservation, env_name="puzzle",
                 max_concurrent_envs=8)
