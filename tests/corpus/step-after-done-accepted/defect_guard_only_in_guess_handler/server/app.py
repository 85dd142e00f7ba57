"""Guess the number (1..100) within 7 turns; a turn is a guess or a hint (the tens digit).

Defect: step dispatches to one handler per command and the "episode over" guard sits in the
guess handler only, so after the episode ends a hint command is still served as a new turn,
with done false while turns remain.
"""
import random
from typing import Any, Literal, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_GUESSES = 7


class GuessAction(Action):
    command: Literal["guess", "hint"] = "guess"
    guess: int = Field(50, ge=1, le=100)


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
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return GuessObservation(feedback="Guess a number from 1 to 100.", reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        if action.command == "hint":
            return self._hint()
        return self._guess(action)

    def _hint(self) -> GuessObservation:
        if self._target is None:
            return GuessObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        tens = self._target // 10
        self._low, self._high = max(self._low, tens * 10), min(self._high, tens * 10 + 9)
        self._done = self._state.step_count >= MAX_GUESSES
        return GuessObservation(low=self._low, high=self._high, done=self._done, reward=0.0,
                                feedback=f"Hint: the tens digit is {tens}.")

    def _guess(self, action: GuessAction) -> GuessObservation:
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

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"guess": (observation["low"] + observation["high"]) // 2}


app = create_app(GuessEnv, GuessAction, GuessObservation, env_name="guess_hint_handler",
                 max_concurrent_envs=8)
