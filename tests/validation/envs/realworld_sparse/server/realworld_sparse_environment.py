"""The realworld_sparse test environment: guess a 6-digit code, told only "wrong" or "correct".

Clean: the code is drawn from the seed and never shown; only a correct guess pays, so fuzzed
and degenerate policies all see reward 0. That is a sparse task, not a constant reward.
No oracle is declared (none can solve it from the observation).
"""

import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from models import SparseAction, SparseObservation

MAX_STEPS = 3
PROMPT = "Guess the 6-digit code."


class SparseEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = False

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._code: Optional[str] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SparseObservation:
        self._code = f"{random.Random(seed).randrange(10**6):06d}"
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SparseObservation(prompt=PROMPT, done=False, reward=0.0)

    def step(self, action: SparseAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SparseObservation:
        if self._code is None:
            return SparseObservation(prompt=PROMPT, feedback="call reset() first", done=True,
                                     reward=0.0)
        if self._done:
            return SparseObservation(prompt=PROMPT, feedback="the episode is over", done=True,
                                     reward=0.0)
        self._state.step_count += 1
        correct = action.answer == self._code
        self._done = correct or self._state.step_count >= MAX_STEPS
        return SparseObservation(prompt=PROMPT, feedback="correct" if correct else "wrong",
                                 done=self._done, reward=1.0 if correct else 0.0)

    @property
    def state(self) -> State:
        return self._state
