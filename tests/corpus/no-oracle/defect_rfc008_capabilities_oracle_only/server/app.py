"""Guess the number (1..100) with higher/lower hints, 7 guesses.

Defect (manifest): the oracle is declared only under validation.capabilities.oracle (RFC 008).
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_GUESSES = 7


class GuessAction(Action):
    guess: int


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
        self._low, self._high = 1, 100
        self._terminal: Optional[GuessObservation] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GuessObservation:
        self._target = random.Random(seed).randint(2, 99)
        self._low, self._high = 1, 100
        self._terminal = None
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return GuessObservation(feedback="Guess a number from 1 to 100.", reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        if self._terminal is not None:
            return self._terminal.model_copy(update={"reward": 0.0})  # same view, no pay
        if self._target is None:
            return GuessObservation(feedback="Call reset() first.", reward=0.0, done=True)
        self._state.step_count += 1
        g, reward = action.guess, 0.0
        if g == self._target:
            text, reward = "Correct!", 1.0
        elif g < self._target:
            self._low, text = max(self._low, g + 1), "Higher."
        else:
            self._high, text = min(self._high, g - 1), "Lower."
        done = reward == 1.0 or self._state.step_count >= MAX_GUESSES
        obs = GuessObservation(low=self._low, high=self._high, feedback=text,
                               reward=reward, done=done)
        if done:
            self._terminal = obs
        return obs

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"guess": (int(observation["low"]) + int(observation["high"])) // 2}


app = create_app(GuessEnv, GuessAction, GuessObservation, env_name="guess_no_oracle",
                 max_concurrent_envs=8)
