"""Guess a number in 1..100 with higher/lower hints; reward 1.0 when found, 0.0 otherwise.

Every observation carries the full history of guesses and hints so far.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class GuessAction(Action):
    guess: int


class GuessObservation(Observation):
    prompt: str = "Guess a number between 1 and 100."
    history: List[str] = []


class GuessEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True
    MAX_GUESSES = 10

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target, self._history, self._done = None, [], False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GuessObservation:
        self._target = random.Random(seed).randint(1, 100)
        self._history, self._done = [], False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return GuessObservation(reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        if self._target is None or self._done:
            return GuessObservation(history=list(self._history), done=True, reward=0.0)
        self._state.step_count += 1
        g = action.guess
        if g == self._target:
            hint = "correct"
        else:
            hint = "higher" if g < self._target else "lower"
        self._history.append(f"guess {g}: {hint}")
        found = hint == "correct"
        self._done = found or self._state.step_count >= self.MAX_GUESSES
        return GuessObservation(history=list(self._history), done=self._done,
                                reward=1.0 if found else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    lo, hi = 1, 100
    for line in observation.get("history", []):
        g, hint = int(line.split()[1].rstrip(":")), line.split()[2]
        if hint == "higher":
            lo = max(lo, g + 1)
        elif hint == "lower":
            hi = min(hi, g - 1)
    return {"guess": (lo + hi) // 2}


app = create_app(GuessEnv, GuessAction, GuessObservation, env_name="guess_history",
                 max_concurrent_envs=8)
