"""Unscramble the word: the letters are shown shuffled; a loss earns partial credit per letter
in place (for the last guess).

Defect: each word's position weights come from random.Random(hash(word)). str hashes are
salted per interpreter process, so every server restart pays the same guesses differently
(stable inside one process, which makes it hard to notice).
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = ["planet", "garden", "silver", "rocket", "window", "bridge", "candle", "forest"]
MAX_TRIES = 6


class WordAction(Action):
    word: str


class WordObservation(Observation):
    letters: str = ""
    feedback: str = ""


def position_weights(word: str) -> List[float]:
    rng = random.Random(hash(word))  # "stable per word"
    w = [rng.uniform(0.5, 1.5) for _ in word]
    total = sum(w)
    return [x / total for x in w]


class WordEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._word, self._letters, self._done = "", "", True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> WordObservation:
        rng = random.Random(seed)
        self._word = rng.choice(WORDS)
        letters = list(self._word)
        rng.shuffle(letters)
        self._letters, self._done = "".join(letters), False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return WordObservation(letters=self._letters, feedback="Unscramble.", reward=0.0)

    def step(self, action: WordAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> WordObservation:
        if self._done:
            return WordObservation(letters=self._letters, feedback="Episode over.", done=True,
                                   reward=0.0)
        self._state.step_count += 1
        guess = action.word.strip().lower()
        if guess == self._word:
            self._done = True
            return WordObservation(letters=self._letters, feedback="Solved!", done=True,
                                   reward=1.0)
        w = position_weights(self._word)
        credit = sum(wi for wi, a, b in zip(w, guess, self._word) if a == b)
        self._done = self._state.step_count >= MAX_TRIES
        in_place = sum(a == b for a, b in zip(guess, self._word))
        return WordObservation(letters=self._letters, feedback=f"{in_place} letters in place.",
                               done=self._done, reward=round(0.5 * credit, 4) if self._done else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    pool = sorted(observation["letters"])
    for w in WORDS:
        if sorted(w) == pool:
            return {"word": w}
    return {"word": observation["letters"]}


app = create_app(WordEnv, WordAction, WordObservation, env_name="unscramble_hash",
                 max_concurrent_envs=8)
