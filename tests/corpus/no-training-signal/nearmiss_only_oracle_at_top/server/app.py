"""Guess a hidden word (its length and first letter are shown); two tries.

The exact word pays 1.0; another answer pays 0.4 * (share of the word's distinct letters
that appear in it). Every word contains an `a`.
Not a defect: only the oracle reaches the top, but weak answers earn different partial
credit, so groups of one seed have non-zero advantages.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = ["banana", "carpet", "mango", "planet", "radar", "salad"]


class GuessAction(Action):
    word: str = Field(..., max_length=300)


class HintObservation(Observation):
    length: int = 0
    first: str = ""
    index: int = 0
    feedback: str = ""


class LettersEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target, self._index, self._done = "", 0, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> HintObservation:
        self._index = random.Random(seed).randrange(len(WORDS))
        self._target, self._done = WORDS[self._index], False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return HintObservation(length=len(self._target), first=self._target[0],
                               index=self._index, reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> HintObservation:
        if not self._target or self._done:
            return HintObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        guess = action.word.strip().lower()
        if guess == self._target:
            reward = 1.0
        else:
            letters = set(self._target)
            reward = round(0.4 * len(letters & set(guess)) / len(letters), 4)
        self._done = reward == 1.0 or self._state.step_count >= 2
        return HintObservation(length=len(self._target), first=self._target[0],
                               index=self._index, feedback=f"Scored {reward}.",
                               done=self._done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"word": WORDS[observation["index"]]}


app = create_app(LettersEnv, GuessAction, HintObservation, env_name="letters",
                 max_concurrent_envs=8)
