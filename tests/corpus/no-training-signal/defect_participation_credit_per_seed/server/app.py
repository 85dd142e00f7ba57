"""Name the capital of a country; one answer per episode.

The right city pays 1.0; any other answer pays the question's participation credit
(0.1, 0.2 or 0.3, fixed per question).
Defect (for training): reward is earned, but it depends on the question only: every wrong
rollout of one prompt gets the same number, so every group's advantages are zero.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

CAPITALS = [("France", "Paris", 0.1), ("Japan", "Tokyo", 0.2), ("Kenya", "Nairobi", 0.3),
            ("Peru", "Lima", 0.2), ("Norway", "Oslo", 0.1), ("Egypt", "Cairo", 0.3)]


class CityAction(Action):
    city: str = Field(..., max_length=100)


class QuizObservation(Observation):
    country: str = ""
    feedback: str = ""


class CapitalEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._item = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuizObservation:
        self._item = CAPITALS[random.Random(seed).randrange(len(CAPITALS))]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QuizObservation(country=self._item[0], reward=0.0)

    def step(self, action: CityAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuizObservation:
        if self._item is None or self._done:
            return QuizObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        country, city, credit = self._item
        right = action.city.strip().lower() == city.lower()
        return QuizObservation(country=country, feedback="Thanks for answering.", done=True,
                               reward=1.0 if right else credit)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"city": {c: city for c, city, _ in CAPITALS}[observation["country"]]}


app = create_app(CapitalEnv, CityAction, QuizObservation, env_name="capitals",
                 max_concurrent_envs=8)
