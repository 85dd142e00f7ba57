"""Spell the word backwards (3 attempts).

Defect: the hidden word starts as "" in __init__ and step() has no before-reset guard, so on
a never-reset instance (every HTTP POST /step) the empty answer equals the reversed "".
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = ["lantern", "harbour", "thistle", "compass", "quarry", "meadow", "saffron"]
MAX_ATTEMPTS = 3


class SpellAction(Action):
    answer: str = ""


class SpellObservation(Observation):
    word: str = ""
    feedback: str = ""


class ReverseEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._word = ""
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SpellObservation:
        self._word = random.Random(seed).choice(WORDS)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SpellObservation(word=self._word, feedback="Spell it backwards.", reward=0.0)

    def step(self, action: SpellAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SpellObservation:
        if self._done:
            return SpellObservation(word=self._word, feedback="Episode over.", reward=0.0,
                                    done=True)
        self._state.step_count += 1
        ok = action.answer.strip().lower() == self._word[::-1]
        self._done = ok or self._state.step_count >= MAX_ATTEMPTS
        return SpellObservation(word=self._word, feedback="Correct." if ok else "No.",
                                reward=1.0 if ok else 0.0, done=self._done)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"answer": observation["word"][::-1]}


app = create_app(ReverseEnv, SpellAction, SpellObservation, env_name="reverse_empty_target",
                 max_concurrent_envs=8)
