"""Mental-arithmetic task: evaluate a generated integer expression; answer is an int."""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class ArithState(State):
    expression: str = ""
    expected: Optional[int] = None


class ArithAction(Action):
    value: int = 0


class ArithObservation(Observation):
    expression: str = ""
    feedback: str = ""


def make_expr(rng: random.Random) -> str:
    a, b, c, d = (rng.randint(100, 9999) for _ in range(4))
    return f"({a} * {b} - {c}) % {d} + {rng.randint(1, 99)} * {rng.randint(100, 999)}"


class ArithEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = ArithState(episode_id=str(uuid4()), step_count=0)
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> ArithObservation:
        expr = make_expr(random.Random(seed))
        # keep the episode's bookkeeping on the state object (handy for debugging / replay)
        self._state = ArithState(episode_id=episode_id or str(uuid4()), step_count=0,
                                 expression=expr, expected=eval(expr))
        self._done = False
        return ArithObservation(expression=expr)

    def step(self, action: ArithAction, timeout_s: Optional[float] = None, **kwargs: Any) -> ArithObservation:
        if self._state.expected is None or self._done:
            return ArithObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        ok = action.value == self._state.expected
        return ArithObservation(expression=self._state.expression, feedback="Correct." if ok else "Incorrect.",
                                done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"value": eval(observation["expression"], {"__builtins__": {}})}


app = create_app(ArithEnv, ArithAction, ArithObservation, env_name="arith", max_concurrent_envs=8)
