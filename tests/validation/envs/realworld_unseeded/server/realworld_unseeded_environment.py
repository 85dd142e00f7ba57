"""The realworld_unseeded test environment: guess a 6-digit code, told only "wrong" or "correct".

Defect (a secret drawn without the seed): the code comes from an unseeded generator, so the
same seed gives different episodes; every observation is the same ("Guess the 6-digit
code."), and only `state.code_digest` (a digest of the code, never a valid answer) shows
the difference.
"""

import hashlib
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from models import UnseededAction, UnseededObservation

MAX_STEPS = 3
PROMPT = "Guess the 6-digit code."


class UnseededEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = False

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._code: Optional[str] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> UnseededObservation:
        # DEFECT: drawn without the seed.
        self._code = f"{random.randrange(10**6):06d}"
        self._done = False
        digest = hashlib.sha256(self._code.encode()).hexdigest()[:16]
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0,
                            code_digest=digest)
        return UnseededObservation(prompt=PROMPT, done=False, reward=0.0)

    def step(self, action: UnseededAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> UnseededObservation:
        if self._code is None:
            return UnseededObservation(prompt=PROMPT, feedback="call reset() first", done=True,
                                       reward=0.0)
        if self._done:
            return UnseededObservation(prompt=PROMPT, feedback="the episode is over", done=True,
                                       reward=0.0)
        self._state.step_count += 1
        correct = action.answer == self._code
        self._done = correct or self._state.step_count >= MAX_STEPS
        return UnseededObservation(prompt=PROMPT, feedback="correct" if correct else "wrong",
                                   done=self._done, reward=1.0 if correct else 0.0)

    @property
    def state(self) -> State:
        return self._state
