"""Guess a number in 1..100 with higher/lower hints; reward 1.0 when found, 0.0 otherwise.

The observation shows the current bounds and only the last 3 guesses (a bounded window).
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WINDOW = 3


class GuessAction(Action):
    guess: int


class GuessObservation(Observation):
    prompt: str = "Guess a number between 1 and 100."
    low: int = 1
    high: int = 100
    recent: List[str] = []


class GuessEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True
    MAX_GUESSES = 10

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target, self._history, self._done = None, [], False
        self._lo, self._hi = 1, 100

    def _obs(self, reward: float) -> GuessObservation:
        return GuessObservation(low=self._lo, high=self._hi, recent=self._history[-WINDOW:],
                                done=self._done, reward=reward)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GuessObservation:
        self._target = random.Random(seed).randint(1, 100)
        self._history, self._done, self._lo, self._hi = [], False, 1, 100
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs(0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        if self._target is None or self._done:
            return self._obs(0.0)
        self._state.step_count += 1
        g = action.guess
        if g == self._target:
            hint = "correct"
        elif g < self._target:
            hint, self._lo = "higher", max(self._lo, g + 1)
        else:
            hint, self._hi = "lower", min(self._hi, g - 1)
        self._history.append(f"guess {g}: {hint}")
        found = hint == "correct"
        self._done = found or self._state.step_count >= self.MAX_GUESSES
        return self._obs(1.0 if found else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"guess": (observation["low"] + observation["high"]) // 2}


app = create_app(GuessEnv, GuessAction, GuessObservation, env_name="guess_window",
                 max_concurrent_envs=8)
