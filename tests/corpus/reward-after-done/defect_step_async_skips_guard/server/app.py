"""Unscramble the word (3 attempts).

Defect: step() has the after-done guard, but step_async() was added later to "avoid the
thread pool" and re-implements the grading without it. OpenEnv's server calls step_async
when it is overridden, so over WebSocket a solved episode pays again on every step.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = ["planet", "silver", "garden", "candle", "rocket", "pillow", "bridge", "marble"]
MAX_ATTEMPTS = 3


class WordAction(Action):
    word: str


class WordObservation(Observation):
    scrambled: str = ""
    feedback: str = ""


class AnagramEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._word, self._scrambled, self._done = None, "", False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> WordObservation:
        rng = random.Random(seed)
        self._word = rng.choice(WORDS)
        letters = sorted(self._word)
        self._scrambled = "".join(letters)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return WordObservation(scrambled=self._scrambled, feedback="Unscramble it.", reward=0.0)

    def _grade(self, action: WordAction) -> WordObservation:
        self._state.step_count += 1
        ok = action.word.strip().lower() == self._word
        self._done = ok or self._state.step_count >= MAX_ATTEMPTS
        return WordObservation(scrambled=self._scrambled, feedback="Correct." if ok else "No.",
                               reward=1.0 if ok else 0.0, done=self._done)

    def step(self, action: WordAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> WordObservation:
        if self._word is None or self._done:
            return WordObservation(scrambled=self._scrambled, feedback="Episode over.",
                                   reward=0.0, done=True)
        return self._grade(action)

    async def step_async(self, action: WordAction, timeout_s: Optional[float] = None,
                         **kwargs: Any) -> WordObservation:
        if self._word is None:
            return WordObservation(feedback="Call reset() first.", reward=0.0, done=True)
        return self._grade(action)

    @property
    def state(self) -> State:
        return self._state


_BY_LETTERS = {"".join(sorted(w)): w for w in WORDS}


def policy(observation: dict) -> dict:
    return {"word": _BY_LETTERS.get(observation["scrambled"], "")}


app = create_app(AnagramEnv, WordAction, WordObservation, env_name="anagram_async",
                 max_concurrent_envs=8)
