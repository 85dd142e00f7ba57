"""Countdown: reach the target with + - * using each given number at most once; one attempt.
Near-miss: state.target looks like an answer, but it is shown in the observation and is not the answer."""
import ast
import random
import re
from collections import Counter
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class ExprAction(Action):
    expression: str = Field(..., max_length=200)


class CountdownObservation(Observation):
    numbers: List[int] = Field(default_factory=list)
    target: int = 0
    feedback: str = ""


class CountdownState(State):
    numbers: List[int] = Field(default_factory=list)
    target: int = 0


def _value(expr: str) -> Optional[int]:
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        return None
    ok = (ast.Expression, ast.BinOp, ast.Constant, ast.Add, ast.Sub, ast.Mult)
    if not all(isinstance(n, ok) for n in ast.walk(tree)):
        return None
    return eval(compile(tree, "<expr>", "eval"), {"__builtins__": {}})


class CountdownEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = CountdownState(episode_id=str(uuid4()))
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> CountdownObservation:
        rng = random.Random(seed)
        nums = [rng.randint(2, 12) for _ in range(3)] + [rng.choice([25, 50, 75])]
        target = nums[3] * nums[0] + nums[1] - nums[2]
        rng.shuffle(nums)
        self._state = CountdownState(episode_id=episode_id or str(uuid4()), step_count=0, numbers=nums, target=target)
        self._done = False
        return CountdownObservation(numbers=nums, target=target, reward=0.0)

    def step(self, action: ExprAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> CountdownObservation:
        if self._done or not self._state.numbers:
            return CountdownObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        used = Counter(int(x) for x in re.findall(r"\d+", action.expression))
        fair = not (used - Counter(self._state.numbers))
        ok = fair and _value(action.expression) == self._state.target
        return CountdownObservation(numbers=self._state.numbers, target=self._state.target, done=True,
                                    feedback="Correct." if ok else "Incorrect.", reward=1.0 if ok else 0.0)

    @property
    def state(self) -> CountdownState:
        return self._state


def policy(observation: dict) -> dict:
    nums, target = observation["numbers"], observation["target"]
    big = next(n for n in nums if n in (25, 50, 75))
    smalls = list(nums)
    smalls.remove(big)
    for i in range(3):
        for j in range(3):
            k = 3 - i - j
            if len({i, j, k}) == 3 and big * smalls[i] + smalls[j] - smalls[k] == target:
                return {"expression": f"{big} * {smalls[i]} + {smalls[j]} - {smalls[k]}"}
    return {"expression": "0"}


app = create_app(CountdownEnv, ExprAction, CountdownObservation, env_name="countdown", max_concurrent_envs=8)
