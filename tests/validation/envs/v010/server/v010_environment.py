"""The v010 environment: guess a word drawn from the seed; `metadata` on every observation
(OpenEnv 0.10 keeps it in the observation and repeats it at the top level of replies)."""

import os
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from models import V010Action, V010Observation, V010ResetObservation

MAX_STEPS = 4
WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor")


def mode() -> str:
    return os.environ.get("V010_MODE", "")


class V010Environment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target = ""
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> V010ResetObservation:
        if mode() == "reset_fails":  # what a harness environment without its agent does
            raise RuntimeError("harness process is not running")
        self._target = random.Random(seed).choice(WORDS)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return V010ResetObservation(target=self._target, instructions="Guess the word.",
                                    reward=0.0, metadata={"seed": seed})

    def step(self, action: V010Action, timeout_s: Optional[float] = None,
             **kwargs: Any) -> V010Observation:
        if not self._target or self._done:
            return V010Observation(target=self._target, count=self._state.step_count,
                                   done=True, reward=0.0, metadata={"note": "reset first"})
        self._state.step_count += 1
        won = action.message == self._target
        reward = 1.0 if won else round(min(len(action.message), 9) / 20, 3)
        self._done = won or self._state.step_count >= MAX_STEPS
        return V010Observation(target=self._target, count=self._state.step_count,
                               done=self._done, reward=reward,
                               metadata={"step": self._state.step_count})

    def list_splits(self):
        if mode() == "task_500":
            raise KeyError("splits.json")  # EK428: a Task API route that fails
        raise NotImplementedError  # no TaskProvider: 501

    @property
    def state(self) -> State:
        return self._state
