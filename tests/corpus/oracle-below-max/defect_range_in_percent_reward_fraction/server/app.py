"""Sort the list ascending (3 attempts); reward = share of positions right on the last
attempt, 1.0 for a fully sorted list.

Defect: openenv.yaml declares `range: [0, 100]` (the accuracy percentage the README
reports), but the reward is a fraction in [0, 1]: the oracle can never reach `hi`.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_ATTEMPTS = 3


class SortAction(Action):
    items: List[int]


class SortObservation(Observation):
    items: List[int] = []
    feedback: str = ""


class SortEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._items: List[int] = []
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SortObservation:
        self._items = random.Random(seed).sample(range(100), 6)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SortObservation(items=list(self._items), feedback="Sort ascending.", reward=0.0)

    def step(self, action: SortAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SortObservation:
        if self._done or not self._items:
            return SortObservation(feedback="Episode over.", reward=0.0, done=True)
        self._state.step_count += 1
        want = sorted(self._items)
        ok = list(action.items) == want
        self._done = ok or self._state.step_count >= MAX_ATTEMPTS
        reward = 1.0 if ok else 0.0
        if self._done and not ok:
            reward = round(0.4 * sum(a == b for a, b in zip(action.items, want)) / len(want), 4)
        return SortObservation(items=list(self._items), feedback="Sorted." if ok else "No.",
                               reward=reward, done=self._done)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"items": sorted(observation["items"])}


app = create_app(SortEnv, SortAction, SortObservation, env_name="sort_percent_range",
                 max_concurrent_envs=8)
