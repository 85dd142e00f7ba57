"""Guess the hidden number (1..100) with higher/lower hints.

Reward: 1.0 for a hit. Closeness credit 0.5 * (1 - |guess - target| / 100) is paid once,
on the 10th (last) guess of a lost episode; every other miss and every repeat earns 0.
The best return of any episode is therefore 1.0, however quickly it is reached.
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
        self._seen: List[int] = []
        self._low, self._high = LOW, HIGH
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GuessObservation:
        self._target = random.Random(seed).randint(LOW + 1, HIGH - 1)
        self._seen, self._low, self._high, self._done = [], LOW, HIGH, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return GuessObservation(hint="start", reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        if self._target is None or self._done:
            return GuessObservation(hint="over", done=True, reward=0.0, attempts_left=0)
        self._state.step_count += 1
        g, last = action.guess, self._state.step_count >= MAX_STEPS
        if g == self._target:
            hint, reward = "correct", (0.0 if g in self._seen else 1.0)
        else:
            reward = 0.0
            if last and g not in self._seen:
                reward = round(0.5 * (1 - abs(g - self._target) / (HIGH - LOW)), 4)
            if g < self._target:
                hint, self._low = "higher", max(self._low, g + 1)
            else:
                hint, self._high = "lower", min(self._high, g - 1)
        self._seen.append(g)
        self._done = hint == "correct" or last
        return GuessObservation(hint=hint, low=self._low, high=self._high, done=self._done,
                                attempts_left=MAX_STEPS - self._state.step_count, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"guess": (observation["low"] + observation["high"]) // 2}


app = create_app(GuessEnv, GuessAction, GuessObservation, env_name="guess",
                 max_concurrent_envs=8)
