"""Linear equations, answer in \\boxed{}; one step.
Reward: 1.0 right boxed value, 0.6 any boxed value, 0.0 no box. Defect: a boxed wrong value earns 0.6."""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
FORMAT_CREDIT = 0.6  # bootstraps the \boxed{} habit early in training


class SolutionAction(Action):
    solution: str = Field(..., max_length=4000)


class EquationObservation(Observation):
    problem: str = ""
    feedback: str = ""


class EquationEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._x: Optional[int] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> EquationObservation:
        rng = random.Random(seed)
        x, a, b = rng.randint(-20, 20), rng.randint(2, 9), rng.randint(1, 50)
        self._x = x
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return EquationObservation(problem=f"Solve for x: {a}x + {b} = {a * x + b}. Put the final answer in \\boxed{{}}.",
                                   reward=0.0)

    def step(self, action: SolutionAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> EquationObservation:
        if self._x is None:
            return EquationObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        boxes = BOXED.findall(action.solution)
        if not boxes:
            r = 0.0
        else:
            try:
                r = 1.0 if int(boxes[-1].strip()) == self._x else FORMAT_CREDIT
            except ValueError:
                r = FORMAT_CREDIT
        self._x = None
        return EquationObservation(feedback=f"score {r}", done=True, reward=r)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b, c = (int(v) for v in re.findall(r"-?\d+", observation["problem"].split(":", 1)[1]))
    x = (c - b) // a
    return {"solution": f"Subtract {b}: {a}x = {c - b}. Divide by {a}: x = {x}. \\boxed{{{x}}}"}


app = create_app(EquationEnv, SolutionAction, EquationObservation, env_name="equations", max_concurrent_envs=8)
