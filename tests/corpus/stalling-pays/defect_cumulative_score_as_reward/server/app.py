"""Pack the items the checklist asks for (4 of 8 shelf items, drawn from the seed).

Each step picks one item by name. The episode ends when every required item is packed
or after 12 steps. Reward: the packing score, the fraction of required items packed.
Defect: `reward=self._score()` is the running score, not its increment: a trainer sums
step rewards, so every step spent after packing 3 items pays 0.75 again.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

SHELF = ["rope", "lamp", "knife", "map", "tent", "stove", "water", "radio"]
MAX_STEPS = 12


class PackAction(Action):
    item: str = Field(..., max_length=20)


class PackObservation(Observation):
    checklist: List[str] = Field(default_factory=list)
    packed: List[str] = Field(default_factory=list)
    shelf: List[str] = Field(default_factory=lambda: list(SHELF))
    message: str = ""


class PackEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._need: List[str] = []
        self._packed: List[str] = []
        self._done = False

    def _score(self) -> float:
        return round(len([i for i in self._need if i in self._packed]) / len(self._need), 4)

    def _obs(self, message: str, reward: float) -> PackObservation:
        return PackObservation(checklist=list(self._need), packed=list(self._packed),
                               message=message, done=self._done, reward=reward)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> PackObservation:
        self._need = random.Random(seed).sample(SHELF, 4)
        self._packed, self._done = [], False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs("Pack every item on the checklist.", 0.0)

    def step(self, action: PackAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> PackObservation:
        if not self._need or self._done:
            self._done = True
            return self._obs("Episode over.", 0.0)
        self._state.step_count += 1
        if action.item in SHELF and action.item not in self._packed:
            self._packed.append(action.item)
            msg = f"Packed {action.item}."
        else:
            msg = f"Nothing packed ({action.item!r} is packed already or not on the shelf)."
        score = self._score()
        self._done = score >= 1.0 or self._state.step_count >= MAX_STEPS
        return self._obs(msg, score)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    missing = [i for i in observation["checklist"] if i not in observation["packed"]]
    return {"item": missing[0] if missing else SHELF[0]}


app = create_app(PackEnv, PackAction, PackObservation, env_name="pack", max_concurrent_envs=8)
