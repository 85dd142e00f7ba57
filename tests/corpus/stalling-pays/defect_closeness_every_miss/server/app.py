"""Guess the hidden number (1..100) with higher/lower hints.

Reward per step: 1.0 for a hit; a miss earns a little shaping for closeness,
0.5 * (1 - |guess - target| / 100), "so the policy gets a gradient".
Defect: the shaping is paid on every miss, repeats included, and the episode lasts
10 steps: sending a near miss ten times returns ~4.9, a first-guess hit returns 1.0.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

LOW, HIGH, MAX_STEPS = 1, 100, 10


class GuessAction(Action):
    guess: int = Field(..., ge=LOW, le=HIGH)


class GuessObservation(Observation):
    hint: str = ""
    low: int = LOW
    high: int = HIGH
    attempts_left: int = MAX_STEPS


class GuessEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target: Optional[int] = None
        self._low, self._high = LOW, HIGH
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GuessObservation:
        self._target = random.Random(seed).randint(LOW + 1, HIGH - 1)
        self._low, self._high, self._done = LOW, HIGH, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return GuessObservation(hint="start", reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        if self._target is None or self._done:
            return GuessObservation(hint="over", done=True, reward=0.0, attempts_left=0)
        self._state.step_count += 1
        g = action.guess
        if g == self._target:
            hint, reward = "correct", 1.0
        else:
            reward = round(0.5 * (1 - abs(g - self._target) / (HIGH - LOW)), 4)
            if g < self._target:
                hint, self._low = "higher", max(self._low, g + 1)
            else:
                hint, self._high = "lower", min(self._high, g - 1)
        self._done = hint == "correct" or self._state.step_count >= MAX_STEPS
        return GuessObservation(hint=hint, low=self._low, high=self._high, done=self._done,
                                attempts_left=MAX_STEPS - self._state.step_count, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    """Binary search on the [low, high] window (wins within 7 guesses)."""
    return {"guess": (observation["low"] + observation["high"]) // 2}


app = create_app(GuessEnv, GuessAction, GuessObservation, env_name="guess",
                 max_concurrent_envs=8)
