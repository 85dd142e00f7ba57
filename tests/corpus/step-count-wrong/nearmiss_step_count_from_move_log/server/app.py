"""Guess the number (1..100) with higher/lower hints, 7 guesses.

Near-miss: there is no stored counter: `state` is rebuilt on every call from the move log,
and a repeated guess is answered "already guessed" early, yet every step (repeat or not) is
appended to the log first, so step_count is 0 after reset and counts every step.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

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
        self._episode_id = str(uuid4())
        self._moves: List[int] = []
        self._target: Optional[int] = None
        self._low, self._high, self._done = 1, 100, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GuessObservation:
        self._target = random.Random(seed).randint(1, 100)
        self._low, self._high, self._done = 1, 100, False
        self._episode_id = episode_id or str(uuid4())
        self._moves = []
        return GuessObservation(feedback="Guess a number from 1 to 100.", reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        if self._target is None or self._done:
            return GuessObservation(feedback="Episode is over; call reset().", done=True,
                                    reward=0.0)
        g = action.guess
        repeated = g in self._moves
        self._moves.append(g)
        if repeated:
            self._done = len(self._moves) >= MAX_GUESSES
            return GuessObservation(low=self._low, high=self._high, done=self._done,
                                    feedback=f"You already guessed {g}.", reward=0.0)
        if g == self._target:
            self._done = True
            return GuessObservation(low=g, high=g, feedback="Correct!", done=True, reward=1.0)
        if g < self._target:
            self._low, text = max(self._low, g + 1), "Higher."
        else:
            self._high, text = min(self._high, g - 1), "Lower."
        self._done = len(self._moves) >= MAX_GUESSES
        return GuessObservation(low=self._low, high=self._high, feedback=text,
                                done=self._done, reward=0.0)

    @property
    def state(self) -> State:
        return State(episode_id=self._episode_id, step_count=len(self._moves))


def policy(observation: dict) -> dict:
    return {"guess": (observation["low"] + observation["high"]) // 2}


app = create_app(GuessEnv, GuessAction, GuessObservation, env_name="guess_move_log",
                 max_concurrent_envs=8)
