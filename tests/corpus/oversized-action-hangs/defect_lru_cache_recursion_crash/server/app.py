"""Join the given words, alphabetically, without spaces; 1.0 if exact, else typo-tolerant credit.

The grader segments the completion into known words, allowing skipped characters (typos):
reward = 1.0 for the exact join, else 0.5 * (share of the given words recovered) when the
segmentation skips at most 2 characters, else 0.0.
"""
import functools
import random
import sys
from typing import Any, List, Optional, Tuple
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

sys.setrecursionlimit(1_000_000)  # long completions recurse deeply
WORDS = ["amber", "basil", "cobalt", "dune", "ember", "fennel", "garnet", "hazel", "indigo",
         "jasper", "kelp", "lilac", "maple", "nutmeg", "olive", "plum"]


class JoinAction(Action):
    text: str


class WordsObservation(Observation):
    words: List[str] = []


def segment(text: str) -> Tuple[int, Tuple[str, ...]]:
    """(characters skipped, words found) of the cheapest segmentation of text."""
    @functools.lru_cache(maxsize=None)
    def best(i: int) -> Tuple[int, Tuple[str, ...]]:
        if i >= len(text):
            return 0, ()
        skip, found = best(i + 1)
        result = (skip + 1, found)
        for w in WORDS:
            if text.startswith(w, i):
                s, f = best(i + len(w))
                result = min(result, (s, (w,) + f), key=lambda r: r[0])
        return result
    return best(0)


class JoinEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._words, self._done = [], True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> WordsObservation:
        self._words, self._done = random.Random(seed).sample(WORDS, 4), False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return WordsObservation(words=list(self._words), reward=0.0)

    def step(self, action: JoinAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> WordsObservation:
        if self._done or not self._words:
            return WordsObservation(done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        text = action.text.strip().lower()
        if text == "".join(sorted(self._words)):
            return WordsObservation(done=True, reward=1.0)
        skipped, found = segment(text)
        share = len(set(found) & set(self._words)) / len(self._words)
        return WordsObservation(done=True, reward=round(0.5 * share, 4) if skipped <= 2 else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"text": "".join(sorted(observation["words"]))}


app = create_app(JoinEnv, JoinAction, WordsObservation, env_name="join_words",
                 max_concurrent_envs=8)
