"""Find the prize: pick one of the listed doors, 5 picks, a wrong door is removed from the list.

Defect: the "episode over" guard tests the step budget only; a win reports done=true but
leaves no trace on the instance, so the next pick of the same door wins again.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_STEPS = 5
DOORS = ["red", "green", "blue", "amber", "violet", "white"]


class DoorAction(Action):
    door: str


class DoorObservation(Observation):
    legal_actions: List[str] = []
    feedback: str = ""
    hint: str = ""


class DoorEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._prize: Optional[str] = None
        self._left: List[str] = []

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> DoorObservation:
        rng = random.Random(seed)
        self._prize = rng.choice(DOORS)
        self._left = list(DOORS)
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return DoorObservation(legal_actions=list(self._left), hint=self._hint(),
                               feedback="Pick a door.", reward=0.0)

    def _hint(self) -> str:  # the prize door's initial, so a smart policy wins at once
        return f"The prize is behind a door starting with '{self._prize[0]}'."

    def step(self, action: DoorAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> DoorObservation:
        if self._prize is None or self._state.step_count >= MAX_STEPS:
            return DoorObservation(feedback="Episode over.", reward=0.0, done=True)
        self._state.step_count += 1
        if action.door == self._prize:
            return DoorObservation(legal_actions=list(self._left), hint=self._hint(),
                                   feedback="You found the prize!", reward=1.0, done=True)
        if action.door in self._left:
            self._left.remove(action.door)
        done = self._state.step_count >= MAX_STEPS
        return DoorObservation(legal_actions=list(self._left), hint=self._hint(),
                               feedback="Empty.", reward=0.0, done=done)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    first = observation["hint"].split("'")[1]
    return {"door": next(d for d in observation["legal_actions"] if d.startswith(first))}


app = create_app(DoorEnv, DoorAction, DoorObservation, env_name="doors_budget_guard",
                 max_concurrent_envs=8)
