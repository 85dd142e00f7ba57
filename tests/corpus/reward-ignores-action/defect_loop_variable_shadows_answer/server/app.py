"""Give a synonym of the word (3 attempts); any accepted synonym earns 1.0.

Defect: the submitted answer is normalised into `answer`, then a loop over the accepted
synonyms reuses the name `answer`, so after the loop `answer` is the last accepted synonym
and the check passes for any action.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

SYNONYMS = {"happy": ["glad", "joyful", "cheerful"], "big": ["large", "huge", "vast"],
            "fast": ["quick", "rapid", "swift"], "cold": ["chilly", "icy", "frosty"],
            "smart": ["clever", "bright", "brainy"], "angry": ["mad", "furious", "irate"]}
MAX_ATTEMPTS = 3


class WordAction(Action):
    word: str


class SynObservation(Observation):
    prompt_word: str = ""
    feedback: str = ""


class SynonymEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._word, self._done = "", False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SynObservation:
        self._word = random.Random(seed).choice(sorted(SYNONYMS))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SynObservation(prompt_word=self._word, feedback="Give a synonym.", reward=0.0)

    def _is_synonym(self, raw: str) -> bool:
        answer = raw.strip().lower()
        accepted: List[str] = []
        for answer in SYNONYMS[self._word]:
            accepted.append(answer.lower())
        return answer in accepted

    def step(self, action: WordAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SynObservation:
        if self._done or not self._word:
            return SynObservation(feedback="Episode over.", reward=0.0, done=True)
        self._state.step_count += 1
        ok = self._is_synonym(action.word)
        self._done = ok or self._state.step_count >= MAX_ATTEMPTS
        return SynObservation(prompt_word=self._word, feedback="Yes." if ok else "No.",
                              reward=1.0 if ok else 0.0, done=self._done)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"word": SYNONYMS[observation["prompt_word"]][0]}


app = create_app(SynonymEnv, WordAction, SynObservation, env_name="synonym_shadow",
                 max_concurrent_envs=8)
