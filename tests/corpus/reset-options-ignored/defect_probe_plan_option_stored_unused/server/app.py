"""Guess the hidden number with higher/lower hints.

reset(seed, max_attempts=n) sets how many guesses the episode allows (default 8); the
range is 1-100. validation/runtime.json (the probe plan) plays it with max_attempts=3.
Defect: reset stores `self._max_attempts`, but `step` and the observation still use the
module constant MAX_STEPS: the option changes nothing.
Reward: 1.0 for a hit, 0.0 for a miss. The episode ends on a hit or when the guesses run out.
"""
import random
from typing import Any, Dict, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

RANGES: Dict[str, int] = {"easy": 10, "medium": 100, "hard": 1000}
MAX_STEPS = 8


class GuessAction(Action):
    guess: int = Field(..., ge=1, le=1000)


class GuessObservation(Observation):
    hint: str = ""
    low: int = 1
    high: int = 10
    attempts_left: int = MAX_STEPS


class GuessEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._difficulty = "easy"
        self._target: Optional[int] = None
        self._low, self._high, self._done = 1, 10, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              max_attempts: int = MAX_STEPS, **kwargs: Any) -> GuessObservation:
        """Start an episode allowing `max_attempts` guesses."""
        self._max_attempts = max(1, int(max_attempts))
        return self._start(seed, episode_id, "medium")

    def _start(self, seed: Optional[int], episode_id: Optional[str],
               difficulty: str) -> GuessObservation:
        top = RANGES.get(difficulty, RANGES["easy"])
        self._target = random.Random(seed).randint(1, top)
        self._low, self._high, self._done = 1, top, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return GuessObservation(hint=f"Guess a number from 1 to {top}.", low=1, high=top,
                                reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        if self._target is None or self._done:
            return GuessObservation(hint="over", done=True, reward=0.0, attempts_left=0)
        self._state.step_count += 1
        g = action.guess
        if g == self._target:
            hint = "correct"
        elif g < self._target:
            hint, self._low = "higher", max(self._low, g + 1)
        else:
            hint, self._high = "lower", min(self._high, g - 1)
        self._done = hint == "correct" or self._state.step_count >= MAX_STEPS
        return GuessObservation(hint=hint, low=self._low, high=self._high, done=self._done,
                                attempts_left=MAX_STEPS - self._state.step_count,
                                reward=1.0 if hint == "correct" else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"guess": (observation["low"] + observation["high"]) // 2}


app = create_app(GuessEnv, GuessAction, GuessObservation, env_name="guess",
                 max_concurrent_envs=8)
