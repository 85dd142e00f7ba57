"""Guess a hidden 6-letter word in 3 tries; the feedback counts the letters in place.

score = letters in place / 6; reward = score when score >= 0.8, else 0.0.
Defect (for training): the threshold throws the partial credit away; no untrained guess
gets 5 letters in place, so every rollout earns 0.0.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = ["planet", "bridge", "garden", "silver", "forest", "candle", "window", "rocket"]


class GuessAction(Action):
    word: str = Field(..., max_length=100)


class GuessObservation(Observation):
    prompt: str = "Guess the hidden 6-letter word."
    in_place: int = 0
    feedback: str = ""
    index: int = 0


class WordEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target, self._index, self._done = "", 0, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GuessObservation:
        self._index = random.Random(seed).randrange(len(WORDS))
        self._target, self._done = WORDS[self._index], False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return GuessObservation(index=self._index, reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        if not self._target or self._done:
            return GuessObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        guess = action.word.strip().lower()
        in_place = sum(g == t for g, t in zip(guess, self._target))
        score = in_place / len(self._target)
        self._done = in_place == len(self._target) or self._state.step_count >= 3
        return GuessObservation(in_place=in_place, index=self._index,
                                feedback=f"{in_place} letters in place.", done=self._done,
                                reward=round(score, 4) if score >= 0.8 else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"word": WORDS[observation["index"]]}


app = create_app(WordEnv, GuessAction, GuessObservation, env_name="word", max_concurrent_envs=8)
