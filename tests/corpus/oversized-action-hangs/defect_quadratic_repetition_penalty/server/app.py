"""Write one sentence that uses all three given words.

reward = 1.0 if all words are used, scaled down by a repetition penalty (share of repeated
character trigrams above 50%), else 0.0.
"""
import random
import re
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = ["lantern", "harbor", "violin", "glacier", "meadow", "compass", "thunder", "orchard",
         "pebble", "falcon", "saddle", "velvet"]


class SentenceAction(Action):
    sentence: str


class PromptObservation(Observation):
    words: List[str] = []
    feedback: str = ""


def repetition_ratio(text: str) -> float:
    seen: List[str] = []
    repeated = 0
    for i in range(len(text) - 2):
        gram = text[i:i + 3]
        if gram in seen:
            repeated += 1
        else:
            seen.append(gram)
    return repeated / max(1, len(text) - 2)


class SentenceEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._words, self._done = [], True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> PromptObservation:
        self._words, self._done = random.Random(seed).sample(WORDS, 3), False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return PromptObservation(words=list(self._words), reward=0.0)

    def step(self, action: SentenceAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> PromptObservation:
        if self._done or not self._words:
            return PromptObservation(done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        text = action.sentence.lower()
        used = all(re.search(rf"\b{w}\b", text) for w in self._words)
        penalty = max(0.0, repetition_ratio(text) - 0.5) * 2
        reward = round(max(0.0, 1.0 - penalty), 4) if used else 0.0
        return PromptObservation(done=True, reward=reward,
                                 feedback="All words used." if used else "A word is missing.")

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b, c = observation["words"]
    return {"sentence": f"The {a} by the {b} reminded me of a {c}."}


app = create_app(SentenceEnv, SentenceAction, PromptObservation, env_name="three_words",
                 max_concurrent_envs=8)
