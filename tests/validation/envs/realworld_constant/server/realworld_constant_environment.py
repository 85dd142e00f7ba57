"""The realworld_constant test environment: write the clue backwards.

Defect (constant reward hidden by nulls): the reward is null on every step but the last,
and 0.5 on the last whatever the answer; the episode always lasts MAX_STEPS steps. The
numeric rewards are constant and do not depend on the action.
"""

import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from models import ConstantAction, ConstantObservation

MAX_STEPS = 3
PROMPT = "Write the clue backwards."
WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor")


class ConstantEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = False

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._target: Optional[str] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ConstantObservation:
        self._target = random.Random(seed).choice(WORDS)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._observe()

    def step(self, action: ConstantAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ConstantObservation:
        if self._target is None:
            return self._observe("call reset() first", done=True)
        if self._done:
            return self._observe("the episode is over", done=True)
        self._state.step_count += 1
        correct = action.answer == self._target
        self._done = self._state.step_count >= MAX_STEPS
        # DEFECT: no reward until the end, then the same reward for any answer.
        return self._observe("correct" if correct else "wrong", self._done,
                             0.5 if self._done else None)

    @property
    def state(self) -> State:
        return self._state

    def _observe(self, feedback: str = "", done: bool = False, reward: Optional[float] = 0.0,
                 **extra: Any) -> ConstantObservation:
        clue = self._target[::-1] if self._target else ""
        return ConstantObservation(
            prompt=PROMPT, clue=clue, feedback=feedback, done=done, reward=reward, **extra)
