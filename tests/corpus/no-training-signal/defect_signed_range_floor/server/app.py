"""Translate an English word to French (two tries); reward range [-1, 1].

The right word pays 1.0; anything else pays -1.0.
Defect (for training): every untrained rollout sits at the low end (-1.0): zero
advantages in every group, although the rewards are not 0.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = [("cat", "chat"), ("dog", "chien"), ("house", "maison"), ("bread", "pain"),
         ("water", "eau"), ("tree", "arbre")]


class WordAction(Action):
    word: str = Field(..., max_length=100)


class WordObservation(Observation):
    english: str = ""
    feedback: str = ""


class TranslateEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._item = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> WordObservation:
        self._item = WORDS[random.Random(seed).randrange(len(WORDS))]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return WordObservation(english=self._item[0], reward=0.0)

    def step(self, action: WordAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> WordObservation:
        if self._item is None or self._done:
            return WordObservation(feedback="Episode over.", done=True, reward=-1.0)
        self._state.step_count += 1
        right = action.word.strip().lower() == self._item[1]
        self._done = right or self._state.step_count >= 2
        return WordObservation(english=self._item[0], feedback="Right." if right else "Wrong.",
                               done=self._done, reward=1.0 if right else -1.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"word": dict(WORDS)[observation["english"]]}


app = create_app(TranslateEnv, WordAction, WordObservation, env_name="translate",
                 max_concurrent_envs=8)
