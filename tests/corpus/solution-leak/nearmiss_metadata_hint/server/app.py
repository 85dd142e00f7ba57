"""Word unscrambling. Observation metadata carries bookkeeping for the rollout logger.

Metadata carries a hint (first letter, length) that helps without giving the word away, and
a wrong answer is told "Incorrect." only.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = ["planet", "garden", "silver", "rocket", "pencil", "window", "basket", "candle",
         "forest", "bridge", "castle", "dragon", "mirror", "orange", "pirate", "tunnel"]


class WordAction(Action):
    word: str = ""


class WordObservation(Observation):
    scrambled: str = ""
    feedback: str = ""


class UnscrambleEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._word: Optional[str] = None
        self._scrambled = ""
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> WordObservation:
        rng = random.Random(seed)
        self._word = rng.choice(WORDS)
        letters = list(self._word)
        while "".join(letters) == self._word:
            rng.shuffle(letters)
        self._scrambled = "".join(letters)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return WordObservation(scrambled=self._scrambled,
                               metadata={"task": "unscramble", "seed": seed,
                                         "hint": {"first_letter": self._word[0],
                                                  "length": len(self._word)}})

    def step(self, action: WordAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> WordObservation:
        if self._word is None or self._done:
            return WordObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        correct = action.word.strip().lower() == self._word
        return WordObservation(scrambled=self._scrambled, done=True,
                               reward=1.0 if correct else 0.0,
                               feedback="Correct." if correct else "Incorrect.")

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    key = sorted(observation["scrambled"])
    return {"word": next(w for w in WORDS if sorted(w) == key)}


app = create_app(UnscrambleEnv, WordAction, WordObservation, env_name="unscramble_hint",
                 max_concurrent_envs=8)
