"""Sort a list of 12 words alphabetically; 1.0 if the order is right, else 0.0.

Each episode captures its log lines with a StringIO handler on the module logger and exposes
them in a per-episode buffer, kept for a post-mortem when an episode goes wrong.
"""
import io
import logging
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = ["apple", "brick", "cider", "delta", "ember", "fjord", "grape", "haven", "igloo", "jolly",
         "koala", "lemon", "mango", "noble", "ocean", "piano", "quart", "raven", "salsa", "tiger"]
logger = logging.getLogger("wordsort")
logger.setLevel(logging.INFO)
logger.propagate = False


class SortAction(Action):
    words: List[str]


class SortObservation(Observation):
    words: List[str] = []


class SortEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._words, self._done, self._log = [], True, io.StringIO()

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SortObservation:
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        self._words, self._done = random.Random(seed).sample(WORDS, 12), False
        # capture this episode's log lines for the final observation
        self._log = io.StringIO()
        handler = logging.StreamHandler(self._log)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
        logger.info("episode %s reset seed=%s words=%s", self._state.episode_id, seed, self._words)
        return SortObservation(words=list(self._words), reward=0.0)

    def step(self, action: SortAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SortObservation:
        if self._done:
            return SortObservation(done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        ok = [w.strip().lower() for w in action.words] == sorted(self._words)
        logger.info("episode %s answered %s -> %s", self._state.episode_id, action.words, ok)
        return SortObservation(done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"words": sorted(observation["words"])}


app = create_app(SortEnv, SortAction, SortObservation, env_name="word_sort",
                 max_concurrent_envs=8)
