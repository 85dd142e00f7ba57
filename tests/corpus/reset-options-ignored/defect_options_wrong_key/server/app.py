"""Unscramble a word.

reset(seed, options={"task_id": "w3"}) selects the word by task id (curriculum use);
without it, the seed picks one. Reward: 1.0 for the word, 0.0 otherwise; one answer.
Defect: the option was renamed from "task" to "task_id" in the docs and the signature
comment, but the lookup still reads options.get("task"): every task_id is ignored.
"""
import random
from typing import Any, Dict, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = {"w0": "planet", "w1": "garden", "w2": "silver", "w3": "candle", "w4": "monkey",
         "w5": "bridge", "w6": "rocket", "w7": "pillow"}


class WordAction(Action):
    word: str = Field(..., max_length=40)


class ScrambleObservation(Observation):
    task_id: str = ""
    scrambled: str = ""
    feedback: str = ""


class ScrambleEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task_id, self._scrambled, self._done = "", "", False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              options: Optional[Dict[str, Any]] = None, **kwargs: Any) -> ScrambleObservation:
        """Start an episode. `options={"task_id": "w0".."w7"}` picks the word."""
        rng = random.Random(seed)
        options = options or {}
        task_id = options.get("task")
        if task_id not in WORDS:
            task_id = rng.choice(sorted(WORDS))
        letters = list(WORDS[task_id])
        while "".join(letters) == WORDS[task_id]:
            rng.shuffle(letters)
        self._task_id, self._scrambled, self._done = task_id, "".join(letters), False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return ScrambleObservation(task_id=task_id, scrambled=self._scrambled, reward=0.0)

    def step(self, action: WordAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ScrambleObservation:
        if not self._task_id or self._done:
            return ScrambleObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        ok = action.word.strip().lower() == WORDS[self._task_id]
        return ScrambleObservation(task_id=self._task_id, scrambled=self._scrambled,
                                   feedback="Correct." if ok else "Wrong.", done=True,
                                   reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    for word in WORDS.values():
        if sorted(word) == sorted(observation["scrambled"]):
            return {"word": word}
    return {"word": ""}


app = create_app(ScrambleEnv, WordAction, ScrambleObservation, env_name="scramble",
                 max_concurrent_envs=8)
