"""Guess the number (1..100) with higher/lower hints, 7 guesses.

Defect: reset 'validates' episode_id as a UUID and quietly replaces anything else with a fresh
uuid4, so ids like "run3-ep17" that trainers build for their logs are ignored.
"""
import random
from typing import Any, Optional
from uuid import UUID, uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_GUESSES = 7


class GuessAction(Action):
    guess: int = Field(..., ge=1, le=100)


class GuessObservation(Observation):
    low: int = 1
    high: int = 100
    feedback: str = ""


class GuessEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target: Optional[int] = None
        self._low, self._high, self._done = 1, 100, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GuessObservation:
        self._target = random.Random(seed).randint(1, 100)
        self._low, self._high, self._done = 1, 100, False
        self._state = State(episode_id=self._valid_id(episode_id), step_count=0)
        return GuessObservation(feedback="Guess a number from 1 to 100.", reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        if self._target is None or self._done:
            return GuessObservation(feedback="Episode is over; call reset().", done=True,
                                    reward=0.0)
        self._state.step_count += 1
        g = action.guess
        if g == self._target:
            self._done = True
            return GuessObservation(low=g, high=g, feedback="Correct!", done=True, reward=1.0)
        if g < self._target:
            self._low, text = max(self._low, g + 1), "Higher."
        else:
            self._high, text = min(self._high, g - 1), "Lower."
        self._done = self._state.step_count >= MAX_GUESSES
        return GuessObservation(low=self._low, high=self._high, feedback=text,
                                done=self._done, reward=0.0)

    @staticmethod
    def _valid_id(episode_id: Optional[str]) -> str:
        try:
            return str(UUID(str(episode_id)))
        except ValueError:
            return str(uuid4())

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"guess": (observation["low"] + observation["high"]) // 2}


app = create_app(GuessEnv, GuessAction, GuessObservation, env_name="guess_uuid_ids",
                 max_concurrent_envs=8)
