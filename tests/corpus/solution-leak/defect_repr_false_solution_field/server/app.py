"""Sort the list: answer with the numbers in ascending order, comma separated.

Defect: `solution` is declared `Field(repr=False)` "so the agent does not see it": repr=False
only hides the field from repr(); model_dump (what OpenEnv sends) still includes it.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class SortAction(Action):
    answer: str = Field("", description="The numbers in ascending order, comma separated.")


class SortObservation(Observation):
    numbers: List[int] = Field(default_factory=list)
    feedback: str = ""
    solution: str = Field("", repr=False)  # kept for the grader's logs, hidden from the agent


class SortEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._numbers: List[int] = []
        self._solution: Optional[str] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SortObservation:
        rng = random.Random(seed)
        self._numbers = rng.sample(range(100), 6)
        self._solution = ",".join(map(str, sorted(self._numbers)))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SortObservation(numbers=self._numbers, solution=self._solution)

    def step(self, action: SortAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SortObservation:
        if self._solution is None or self._done:
            return SortObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        given = ",".join(p.strip() for p in action.answer.strip().strip("[]").split(","))
        ok = given == self._solution
        return SortObservation(numbers=self._numbers, solution=self._solution, done=True,
                               reward=1.0 if ok else 0.0,
                               feedback="Correct." if ok else "Not sorted correctly.")

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"answer": ", ".join(map(str, sorted(observation["numbers"])))}


app = create_app(SortEnv, SortAction, SortObservation, env_name="sort_repr",
                 max_concurrent_envs=8)
