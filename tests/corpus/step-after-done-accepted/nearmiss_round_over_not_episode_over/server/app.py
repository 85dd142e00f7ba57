"""Three rounds of guess-the-number (1..20, 5 guesses per round) in one episode.

Near-miss: a won or lost round is announced (round_over=true) and the next guesses go on
with done=false, which looks like play continuing after the end; but the
episode's done comes only after the third round (paying the share of rounds won), and every
step after it is refused.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

ROUNDS, GUESSES_PER_ROUND = 3, 5


class GuessAction(Action):
    guess: int = Field(..., ge=1, le=20)


class RoundsObservation(Observation):
    round: int = 1
    low: int = 1
    high: int = 20
    round_over: bool = False
    feedback: str = ""


class RoundsEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._targets: list = []
        self._done = True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> RoundsObservation:
        rng = random.Random(seed)
        self._targets = [rng.randint(1, 20) for _ in range(ROUNDS)]
        self._wins = 0
        self._round, self._tries, self._low, self._high, self._done = 0, 0, 1, 20, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return RoundsObservation(feedback="Round 1: guess 1..20.", reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> RoundsObservation:
        if self._done:
            return RoundsObservation(round=ROUNDS, feedback="Episode over; call reset().",
                                     round_over=True, done=True, reward=0.0)
        self._state.step_count += 1
        self._tries += 1
        g, target = action.guess, self._targets[self._round]
        won = g == target
        if not won:
            if g < target:
                self._low = max(self._low, g + 1)
            else:
                self._high = min(self._high, g - 1)
        if won or self._tries >= GUESSES_PER_ROUND:
            text = f"Round {self._round + 1} " + ("won!" if won else f"lost (it was {target}).")
            self._round += 1
            self._wins += won
            self._tries, self._low, self._high = 0, 1, 20
            self._done = self._round >= ROUNDS
            return RoundsObservation(round=min(self._round + 1, ROUNDS), round_over=True,
                                     feedback=text, done=self._done,
                                     reward=self._wins / ROUNDS if self._done else 0.0)
        return RoundsObservation(round=self._round + 1, low=self._low, high=self._high,
                                 feedback="Higher." if g < target else "Lower.", reward=0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"guess": (observation["low"] + observation["high"]) // 2}


app = create_app(RoundsEnv, GuessAction, RoundsObservation, env_name="guess_rounds",
                 max_concurrent_envs=8)
